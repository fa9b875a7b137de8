#pragma once
// The scheduler's copy of one worker's slot array for one table: which key
// each slot holds, the free slots and the eviction order. The worker's own
// cache mirrors it exactly because it only ever executes these decisions.

#include <cstdint>
#include <memory>
#include <vector>

#include "common/ids.h"
#include "scheduler/herald/eviction_order.h"

namespace herald::scheduler {

class CacheLayout {
 public:
  CacheLayout(uint32_t slots, EvictionKind eviction);
  CacheLayout(const CacheLayout& other);
  CacheLayout& operator=(const CacheLayout& other);
  CacheLayout(CacheLayout&&) = default;
  CacheLayout& operator=(CacheLayout&&) = default;

  uint32_t slots() const { return static_cast<uint32_t>(key_at_.size()); }
  size_t resident() const { return key_at_.size() - free_.size(); }
  bool HasFree() const { return !free_.empty(); }
  Key KeyAt(uint32_t slot) const { return key_at_[slot]; }
  // The row-directory handle of the row in `slot`.
  uint32_t RowAt(uint32_t slot) const { return row_at_[slot]; }

  void Use(uint32_t slot, uint64_t iteration) { order_->Use(slot, iteration); }
  // Hints that Use(slot) comes soon (memory prefetch only).
  void PrefetchUse(uint32_t slot) const { order_->Prefetch(slot); }
  // Places `key` (directory handle `row`) in a free slot (the most recently
  // freed; slot 0 first in a new cache) and counts it used at `iteration`.
  // REQUIRES: HasFree() and `key` not resident. (Which slot holds a key is
  // kept by the row directory: RowDirectory::SlotOf.)
  uint32_t Insert(Key key, uint32_t row, uint64_t iteration);
  // The next `n` victims (fewer when fewer slots may go): the coldest slots
  // not used at `iteration`, coldest first, as n rounds of evicting the
  // coldest would give.
  void Victims(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const {
    order_->ColdestN(iteration, n, out);
  }
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
  std::vector<uint32_t> row_at_;
  std::vector<bool> occupied_;
  std::vector<uint32_t> free_;  // a stack: the lowest slot on top
  std::unique_ptr<EvictionOrder> order_;
};

}  // namespace herald::scheduler
