#include "common/data/open_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/data/binary_format.h"
#include "common/data/criteo_tsv.h"
#include "common/data/input_stream.h"
#include "common/status.h"

namespace herald::data {

absl::StatusOr<FileFormat> ParseFileFormat(const std::string& name) {
  if (name == "auto") return FileFormat::kAuto;
  if (name == "tsv") return FileFormat::kTsv;
  if (name == "bin") return FileFormat::kBinary;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown data format '", name, "' (auto|tsv|bin)"));
}

absl::StatusOr<std::unique_ptr<SampleReader>> OpenReader(FileFormat format,
                                                         const std::vector<std::string>& paths,
                                                         ReaderOptions options) {
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputPaths(paths));
  if (format == FileFormat::kAuto) {
    char magic[8] = {0};
    HERALD_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, OpenFileInput(files[0]));
    for (size_t got = 0; got < sizeof(magic);) {  // a Read may return fewer bytes
      HERALD_ASSIGN_OR_RETURN(size_t k, in->Read(magic + got, sizeof(magic) - got));
      if (k == 0) break;
      got += k;
    }
    format = std::memcmp(magic, "HRLDBIN1", 8) == 0 || std::memcmp(magic, "HRLDBIN2", 8) == 0
                 ? FileFormat::kBinary
                 : FileFormat::kTsv;
  }
  if (format == FileFormat::kBinary) {
    HERALD_ASSIGN_OR_RETURN(options.schema, ReadBinarySchema(files[0]));
    HERALD_ASSIGN_OR_RETURN(auto reader, BinaryReader::Open(files, options));
    return std::unique_ptr<SampleReader>(std::move(reader));
  }
  InputOpener opener = FileOpener(files);
  return std::make_unique<CriteoTsvReader>(std::move(files), std::move(opener), options);
}

}  // namespace herald::data
