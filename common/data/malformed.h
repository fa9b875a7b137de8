#pragma once
// What readers do with malformed input, and the record of what they found.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace herald::data {

enum class OnMalformed {
  kSkip,  // count the record, remember its position, go on
  kFail,  // stop with an error naming file, line and reason
};

struct MalformedRecord {
  std::string file;
  uint64_t line = 0;  // 1-based line (TSV) or first sample index + 1 (binary); 0: none
  std::string reason;
  // "file:line: reason" (or "file: reason" when line is 0).
  std::string ToString() const;
};

// Counts malformed records and keeps the first `max_kept` of them.
// Not thread-safe.
class MalformedLog {
 public:
  explicit MalformedLog(size_t max_kept = 100) : max_kept_(max_kept) {}
  void Add(MalformedRecord record);
  // Adds `other`'s count and as many of its kept records as fit.
  void Merge(const MalformedLog& other);
  uint64_t count() const { return count_; }
  const std::vector<MalformedRecord>& kept() const { return kept_; }
  // One record per line, then "... and N more" when records were dropped.
  std::string Summary() const;

 private:
  size_t max_kept_;
  uint64_t count_ = 0;
  std::vector<MalformedRecord> kept_;
};

// The error returned under OnMalformed::kFail: `code` with "file:line: reason".
absl::Status MalformedError(absl::StatusCode code, const MalformedRecord& record);

// A line that did not parse (`why`): the InvalidArgument MalformedError
// under kFail; else added to `log` and OK.
absl::Status RejectLine(OnMalformed policy, const std::string& file, uint64_t line,
                        const absl::Status& why, MalformedLog* log);

}  // namespace herald::data
