#include "scheduler/planner/policy.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace herald::scheduler {
namespace {

std::vector<Policy> AllPolicies() {
  return {
      {"nocache", Allocation::kContiguous, SyncMode::kThroughPs, false},
      {"vanilla", Allocation::kRandom, SyncMode::kThroughPs, true},
      {"herald", Allocation::kLocality, SyncMode::kOwnership, true},
      {"herald-alloc-only", Allocation::kLocality, SyncMode::kThroughPs, true},
      {"herald-comm-only", Allocation::kRandom, SyncMode::kOwnership, true},
      {"herald-adaptive", Allocation::kLocality, SyncMode::kOwnership, true, true},
      {"het", Allocation::kRandom, SyncMode::kStale, true},
  };
}

}  // namespace

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (const Policy& p : AllPolicies()) names.push_back(p.name);
  return names;
}

absl::StatusOr<Policy> PolicyByName(const std::string& name) {
  for (const Policy& p : AllPolicies()) {
    if (p.name == name) return p;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown policy '", name, "' (known: ", absl::StrJoin(PolicyNames(), ", "), ")"));
}

}  // namespace herald::scheduler
