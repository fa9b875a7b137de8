#pragma once
// The scheduler's copy of one worker's slot array for one table: which key
// each slot holds, the free slots and the eviction order. The worker's own
// cache mirrors it exactly because it only ever executes these decisions.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "scheduler/herald/eviction_order.h"

namespace herald::scheduler {

class CacheLayout {
 public:
  static constexpr int64_t kAbsent = -1;

  CacheLayout(uint32_t slots, EvictionKind eviction);

  uint32_t slots() const { return static_cast<uint32_t>(key_at_.size()); }
  size_t resident() const { return slot_of_.size(); }
  bool HasFree() const { return !free_.empty(); }

  // The slot holding `key`, or kAbsent.
  int64_t Find(Key key) const {
    auto it = slot_of_.find(key);
    return it == slot_of_.end() ? kAbsent : it->second;
  }
  Key KeyAt(uint32_t slot) const { return key_at_[slot]; }

  void Use(uint32_t slot, uint64_t iteration) { order_->Use(slot, iteration); }
  // Places `key` in a free slot (the most recently freed; slot 0 first in a
  // new cache) and counts it used at `iteration`.
  // REQUIRES: HasFree() and Find(key) == kAbsent.
  uint32_t Insert(Key key, uint64_t iteration);
  // The coldest slot not used at `iteration`, or kAbsent.
  int64_t Victim(uint64_t iteration) const { return order_->Coldest(iteration); }
  void Remove(uint32_t slot);

  // Calls fn(slot, key) for every resident slot, in slot order.
  template <typename Fn>
  void ForEachResident(Fn fn) const {
    for (uint32_t s = 0; s < key_at_.size(); ++s) {
      if (occupied_[s]) fn(s, key_at_[s]);
    }
  }

 private:
  std::vector<Key> key_at_;
  std::vector<bool> occupied_;
  std::vector<uint32_t> free_;  // a stack: the lowest slot on top
  absl::flat_hash_map<Key, uint32_t> slot_of_;
  std::unique_ptr<EvictionOrder> order_;
};

}  // namespace herald::scheduler
