#include "scheduler/planner/recent_ps_changes.h"

#include "absl/strings/str_cat.h"

namespace herald::scheduler {

void RecentPsChanges::NextIteration() {
  changed_.emplace_front(tables_);
  if (changed_.size() > size_t{kMaxEarlyDistance} + 1) changed_.pop_back();
}

void RecentPsChanges::Changed(uint32_t table, Key key) { changed_.front()[table].insert(key); }

std::string RecentPsChanges::CheckEarly(uint32_t table, Key key, uint8_t distance,
                                        uint64_t iteration) const {
  if (distance > kMaxEarlyDistance) {
    return absl::StrCat("is marked early at distance ", distance, ": at most ", kMaxEarlyDistance);
  }
  for (size_t back = 1; back <= distance && back < changed_.size(); ++back) {
    if (changed_[back][table].contains(key)) {
      return absl::StrCat("is marked early at distance ", distance, ", but iteration ",
                          iteration - back, " changed its PS copy");
    }
  }
  return "";
}

}  // namespace herald::scheduler
