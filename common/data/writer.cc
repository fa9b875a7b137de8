#include "common/data/writer.h"

#include "absl/strings/str_cat.h"
#include "common/data/binary_format.h"
#include "common/data/criteo_tsv.h"
#include "common/status.h"

namespace herald::data {

absl::StatusOr<std::unique_ptr<SampleWriter>> OpenWriter(const std::string& format,
                                                         const std::string& path, DataSchema schema,
                                                         const ColumnsSchema* columns) {
  if (format == "tsv") {
    HERALD_ASSIGN_OR_RETURN(auto w, CriteoTsvWriter::Create(path));
    return std::unique_ptr<SampleWriter>(std::move(w));
  }
  if (format == "bin" && columns != nullptr) {
    HERALD_ASSIGN_OR_RETURN(auto w, BinaryWriter::CreateWithColumns(path, *columns));
    return std::unique_ptr<SampleWriter>(std::move(w));
  }
  if (format == "bin") {
    HERALD_ASSIGN_OR_RETURN(auto w, BinaryWriter::Create(path, schema));
    return std::unique_ptr<SampleWriter>(std::move(w));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown output format '", format, "' (tsv|bin)"));
}

}  // namespace herald::data
