#pragma once
// Criteo Kaggle/Terabyte TSV: one sample per line,
//   label \t I1 .. I<num_dense> \t C1 .. C<num_sparse> \n
// label: 0 or 1 (any number in [0, 1] is accepted); I*: decimal integers that
// fit in int32, empty = missing; C*: hexadecimal ids of 1 to 16 digits, empty =
// missing. Extension (multi-hot): a categorical field may hold several ids
// separated by ',' (e.g. "a1,b2,c3"). A trailing '\r' is ignored.
// Full description: docs/data-formats.md.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/input_stream.h"
#include "common/data/line_source.h"
#include "common/data/reader.h"
#include "common/data/writer.h"

namespace herald::data {

// Parses one line (without '\n') and appends it to `out`. On error returns the
// reason (e.g. "dense feature I3: not an integer 'x'") and leaves `out`
// unchanged.
absl::Status ParseCriteoLine(absl::string_view line, SampleBlock* out);

// The same contract, always through the field-by-field validating parser that
// ParseCriteoLine falls back to for unusual lines. Exposed so tests and the
// fuzz target can check that both parsers agree.
absl::Status ParseCriteoLineValidating(absl::string_view line, SampleBlock* out);

// Reader over several inputs (files in order). See SampleReader.
class CriteoTsvReader final : public SampleReader {
 public:
  // `names[i]` names input i in error messages; `opener(i)` opens it. Inputs
  // are opened one at a time.
  CriteoTsvReader(std::vector<std::string> names, InputOpener opener, ReaderOptions options);
  // Convenience: files or directories.
  static absl::StatusOr<std::unique_ptr<CriteoTsvReader>> Open(
      const std::vector<std::string>& paths, ReaderOptions options);

  absl::StatusOr<size_t> Read(size_t max_samples, SampleBlock* out) override;
  const MalformedLog& malformed() const override { return malformed_; }
  DataSchema schema() const override { return options_.schema; }
  // {0, next input} between inputs; else {1, input, byte offset of the
  // next line, lines read}. Seek reopens the input there and checks that
  // the byte before ends a line or the input ends there (else DataLoss:
  // the input changed).
  absl::StatusOr<std::vector<uint64_t>> Position() const override { return lines_.Position(); }
  absl::Status Seek(const std::vector<uint64_t>& position) override {
    return lines_.Seek(position);
  }

 private:
  ReaderOptions options_;
  LineSource lines_;
  MalformedLog malformed_;
};

// Writes samples as Criteo TSV lines. Not thread-safe. Write refuses a
// block with other than one label or with a dense value that is not an
// integer in int32 (naming the sample and feature).
class CriteoTsvWriter final : public SampleWriter {
 public:
  static absl::StatusOr<std::unique_ptr<CriteoTsvWriter>> Create(const std::string& path);
  ~CriteoTsvWriter() override;
  absl::Status Write(const SampleBlock& block) override;
  absl::Status Close() override;

 private:
  CriteoTsvWriter(std::FILE* f, std::string path) : f_(f), path_(std::move(path)) {}
  std::FILE* f_;
  std::string path_;
  std::string buffer_;
};

// Appends the TSV line of sample `s` of `block` (with '\n') to `out`.
void AppendCriteoLine(const SampleBlock& block, size_t s, std::string* out);

}  // namespace herald::data
