#pragma once
// SampleWriter: the sink side of the data formats.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/data/column_schema.h"
#include "common/data/sample_block.h"

namespace herald::data {

// Not thread-safe. Close() must be called for the output to be complete.
class SampleWriter {
 public:
  virtual ~SampleWriter() = default;
  virtual absl::Status Write(const SampleBlock& block) = 0;
  virtual absl::Status Close() = 0;
};

// Opens a writer for "tsv" (Criteo TSV) or "bin": binary version 2 with
// `columns` stored when given, else version 1. Errors: InvalidArgument for
// another format, Unavailable if the file cannot be created.
absl::StatusOr<std::unique_ptr<SampleWriter>> OpenWriter(const std::string& format,
                                                         const std::string& path, DataSchema schema,
                                                         const ColumnsSchema* columns = nullptr);

}  // namespace herald::data
