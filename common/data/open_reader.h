#pragma once
// Opens a SampleReader for a data source given by format and paths.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/reader.h"

namespace herald::data {

enum class FileFormat { kAuto, kTsv, kBinary };

// Parses "auto", "tsv" or "bin". Errors: InvalidArgument naming the value.
absl::StatusOr<FileFormat> ParseFileFormat(const std::string& name);

// Opens `paths` (files or directories). kAuto looks at the first file: the
// Herald binary magic means binary, anything else TSV. For binary inputs the
// schema is read from the file header and overrides options.schema.
absl::StatusOr<std::unique_ptr<SampleReader>> OpenReader(FileFormat format,
                                                         const std::vector<std::string>& paths,
                                                         ReaderOptions options);

}  // namespace herald::data
