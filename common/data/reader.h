#pragma once
// SampleReader: a stream of samples from TSV, binary or generated sources.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/column_schema.h"
#include "common/data/malformed.h"
#include "common/data/sample_block.h"
#include "common/tunables.h"

namespace herald::data {

// Not thread-safe. Memory is bounded by the reader's buffer, not the input.
class SampleReader {
 public:
  virtual ~SampleReader() = default;

  // Appends up to `max_samples` samples to `out` (whose schema must match).
  // Returns the number appended; 0 means the input is exhausted.
  // Malformed records follow the reader's OnMalformed policy: skipped and
  // logged in malformed(), or returned as InvalidArgument (TSV) / DataLoss
  // (checksum, truncation) naming file, line and reason. After an error the
  // reader must not be used again.
  virtual absl::StatusOr<size_t> Read(size_t max_samples, SampleBlock* out) = 0;

  virtual const MalformedLog& malformed() const = 0;

  // The schema of the samples this reader produces.
  virtual DataSchema schema() const = 0;
  // The column schema the samples were read with (the CSV reader; binary
  // files of version 2), or null: Criteo's layout, integer dense values.
  virtual const ColumnsSchema* columns() const { return nullptr; }
  // Where the reader is: words that Seek takes back on a reader opened on
  // the same inputs, which then reads the same samples from there on (a
  // resumed job's data cursor).
  virtual absl::StatusOr<std::vector<uint64_t>> Position() const = 0;
  // REQUIRES: nothing read yet. Errors: InvalidArgument (words that are no
  // position of these inputs), DataLoss (the inputs changed).
  virtual absl::Status Seek(const std::vector<uint64_t>& position) = 0;
};

struct ReaderOptions {
  DataSchema schema = kCriteoSchema;
  OnMalformed on_malformed = OnMalformed::kSkip;
  // Read buffer size; a longer line grows the buffer as needed.
  size_t buffer_bytes = tunables::kReaderBufferBytes;
  // Malformed records kept for reporting (all are counted).
  size_t max_malformed_kept = tunables::kMaxMalformedReported;
};

}  // namespace herald::data
