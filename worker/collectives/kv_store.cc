#include "worker/collectives/kv_store.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace herald::worker {

absl::Status InProcessKvStore::Set(const std::string& key, const std::string& value) {
  absl::MutexLock lock(&mu_);
  values_[key] = value;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> InProcessKvStore::Get(const std::vector<std::string>& keys,
                                                               absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto all_present = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    for (const auto& k : keys) {
      if (!values_.contains(k)) return false;
    }
    return true;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&all_present), timeout)) {
    std::vector<std::string> missing;
    for (const auto& k : keys) {
      if (!values_.contains(k)) missing.push_back(k);
    }
    return absl::DeadlineExceededError(absl::StrCat("kv store: keys still missing after ",
                                                    absl::FormatDuration(timeout), ": ",
                                                    absl::StrJoin(missing, ", ")));
  }
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(values_.at(k));
  return out;
}

}  // namespace herald::worker
