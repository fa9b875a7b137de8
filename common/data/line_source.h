#pragma once
// Lines of several inputs in turn, with a position that a fresh source over
// the same inputs seeks back to: the line machinery of the text readers.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/input_stream.h"

namespace herald::data {

// Not thread-safe. Memory: one buffer, grown to the longest line.
class LineSource {
 public:
  // `names[i]` names input i in messages; `opener(i)` opens it. Inputs are
  // opened one at a time. `what` names the reader in position errors.
  LineSource(std::vector<std::string> names, InputOpener opener, size_t buffer_bytes,
             std::string what);

  // The next line, without its '\n' (a trailing '\r' stays); the last line
  // of an input may lack the '\n'. Valid until the next call. Returns false
  // after the last line of the last input.
  absl::StatusOr<bool> Next(absl::string_view* line);

  // Of the line Next returned last: its input's index and name, and its
  // 1-based line number in that input.
  size_t input() const { return input_index_ - 1; }
  const std::string& name() const { return names_[input_index_ - 1]; }
  uint64_t line_number() const { return line_number_; }
  size_t num_inputs() const { return names_.size(); }
  const std::string& input_name(size_t index) const { return names_[index]; }

  // {0, next input} between inputs; else {1, input, byte offset of the
  // next line, lines read}.
  std::vector<uint64_t> Position() const;
  // Reopens the input there and checks that the byte before ends a line or
  // the input ends there. Errors: InvalidArgument (not a position of these
  // inputs), DataLoss (the input changed since).
  absl::Status Seek(const std::vector<uint64_t>& position);

  // The first line of input `index` (without '\n' or a trailing '\r'), read
  // from a fresh opening of it: a header, after a Seek past it. Errors:
  // the opener's; InvalidArgument for an empty input.
  absl::StatusOr<std::string> FirstLine(size_t index) const;

 private:
  absl::Status OpenNext();

  std::vector<std::string> names_;
  InputOpener opener_;
  std::string what_;
  std::unique_ptr<InputStream> input_;
  size_t input_index_ = 0;  // index of the next input to open
  uint64_t line_number_ = 0;
  std::vector<char> buf_;
  uint64_t buf_offset_ = 0;  // offset in the input of buf_[0]
  size_t pos_ = 0, end_ = 0;
  bool input_eof_ = true;
};

}  // namespace herald::data
