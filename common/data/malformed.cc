#include "common/data/malformed.h"

#include "absl/strings/str_cat.h"

namespace herald::data {

std::string MalformedRecord::ToString() const {
  if (line == 0) return absl::StrCat(file, ": ", reason);
  return absl::StrCat(file, ":", line, ": ", reason);
}

void MalformedLog::Add(MalformedRecord record) {
  ++count_;
  if (kept_.size() < max_kept_) kept_.push_back(std::move(record));
}

void MalformedLog::Merge(const MalformedLog& other) {
  count_ += other.count_;
  for (const MalformedRecord& r : other.kept_) {
    if (kept_.size() >= max_kept_) break;
    kept_.push_back(r);
  }
}

std::string MalformedLog::Summary() const {
  std::string out;
  for (const auto& r : kept_) absl::StrAppend(&out, r.ToString(), "\n");
  if (count_ > kept_.size()) absl::StrAppend(&out, "... and ", count_ - kept_.size(), " more\n");
  return out;
}

absl::Status MalformedError(absl::StatusCode code, const MalformedRecord& record) {
  return absl::Status(code, record.ToString());
}

absl::Status RejectLine(OnMalformed policy, const std::string& file, uint64_t line,
                        const absl::Status& why, MalformedLog* log) {
  MalformedRecord record{file, line, std::string(why.message())};
  if (policy == OnMalformed::kFail) {
    return MalformedError(absl::StatusCode::kInvalidArgument, record);
  }
  log->Add(std::move(record));
  return absl::OkStatus();
}

}  // namespace herald::data
