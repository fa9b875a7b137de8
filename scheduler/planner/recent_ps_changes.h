#pragma once
// The keys whose PS copy each of the last kMaxEarlyDistance
// iterations changed, per table: what the plan checkers (plan_replay.h,
// staleness_checker.h) check a fetch's early distance against
// (plan::FetchRows::early). Not thread-safe. Memory: the keys those
// iterations changed.

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "common/ids.h"

namespace herald::scheduler {

class RecentPsChanges {
 public:
  explicit RecentPsChanges(size_t tables) : tables_(tables) {}

  // The next iteration begins (the first one too): the oldest one's keys
  // are forgotten.
  void NextIteration();
  // The current iteration changes `key`'s PS copy in `table`.
  void Changed(uint32_t table, Key key);
  // Empty when a fetch of `key` in the current iteration (`iteration`)
  // marked early at `distance` reads a PS copy none of the iterations it
  // spans changed; else why not, worded after "fetch of key K ".
  std::string CheckEarly(uint32_t table, Key key, uint8_t distance, uint64_t iteration) const;

 private:
  size_t tables_;
  // [0]: the current iteration's keys per table, [i]: i iterations before.
  std::deque<std::vector<absl::flat_hash_set<Key>>> changed_;
};

}  // namespace herald::scheduler
