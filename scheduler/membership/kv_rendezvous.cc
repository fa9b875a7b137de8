#include "scheduler/membership/kv_rendezvous.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace herald::scheduler {

absl::Status KvRendezvous::Set(const std::string& scope, const std::string& key,
                               std::string value) {
  if (scope.empty() || key.empty()) return absl::InvalidArgumentError("scope and key: must be set");
  if (value.size() > kMaxValueBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("value of ", key, ": ", value.size(), " bytes, limit ", kMaxValueBytes));
  }
  absl::MutexLock lock(&mu_);
  auto& values = scopes_[scope];
  if (values.size() >= kMaxKeysPerScope && !values.contains(key)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("scope ", scope, " holds ", kMaxKeysPerScope, " keys already"));
  }
  values[key] = std::move(value);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> KvRendezvous::Get(const std::string& scope,
                                                           const std::vector<std::string>& keys,
                                                           absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  auto all_present = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = scopes_.find(scope);
    if (it == scopes_.end()) return keys.empty();
    for (const auto& k : keys) {
      if (!it->second.contains(k)) return false;
    }
    return true;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&all_present), wait)) {
    std::vector<std::string> missing;
    auto it = scopes_.find(scope);
    for (const auto& k : keys) {
      if (it == scopes_.end() || !it->second.contains(k)) missing.push_back(k);
    }
    return absl::DeadlineExceededError(absl::StrCat("rendezvous scope ", scope, ": keys ",
                                                    absl::StrJoin(missing, ", "), " not set"));
  }
  std::vector<std::string> out;
  const auto& values = scopes_[scope];
  for (const auto& k : keys) out.push_back(values.at(k));
  return out;
}

void KvRendezvous::DropScope(const std::string& scope) {
  absl::MutexLock lock(&mu_);
  scopes_.erase(scope);
}

}  // namespace herald::scheduler
