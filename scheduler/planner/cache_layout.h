#pragma once
// The scheduler's copy of one worker's slot array for one table: which row
// each slot holds, the free slots and the eviction order. The worker's own
// cache mirrors it exactly because it only ever executes these decisions.

#include <cstdint>
#include <memory>
#include <vector>

#include "scheduler/planner/eviction_order.h"

namespace herald::scheduler {

class CacheLayout {
 public:
  CacheLayout(uint32_t slots, EvictionKind eviction);
  CacheLayout(const CacheLayout& other);
  CacheLayout& operator=(const CacheLayout& other);
  CacheLayout(CacheLayout&&) = default;
  CacheLayout& operator=(CacheLayout&&) = default;

  uint32_t slots() const { return static_cast<uint32_t>(row_at_.size()); }
  size_t resident() const { return never_used_ - freed_.size(); }
  bool HasFree() const { return !freed_.empty() || never_used_ < row_at_.size(); }
  // The row-directory handle of the row in `slot` (resident). The row's key
  // is in its directory entry.
  uint32_t RowAt(uint32_t slot) const { return row_at_[slot]; }

  void Use(uint32_t slot, uint64_t iteration) { order_->Use(slot, iteration); }
  // Whether `slot` holds the worker's dirty copy (EvictionOrder::SetDirty).
  void SetDirty(uint32_t slot, bool dirty) { order_->SetDirty(slot, dirty); }
  void MarkAllClean() { order_->MarkAllClean(); }
  // Hints that Use(slot) comes soon (memory prefetch only).
  void PrefetchUse(uint32_t slot) const { order_->Prefetch(slot); }
  // Places the row of directory handle `row` in a free slot (the most
  // recently freed; else the lowest never used, slot 0 first in a new
  // cache) and counts it used at `iteration`. REQUIRES: HasFree() and the
  // row not resident. (Which slot holds a row is kept by the row
  // directory: RowDirectory::SlotOf.)
  uint32_t Insert(uint32_t row, uint64_t iteration);
  // The next `n` victims (fewer when fewer slots may go): the coldest slots
  // not used at `iteration`, coldest first, as n rounds of evicting the
  // coldest would give.
  void Victims(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const {
    order_->ColdestN(iteration, n, out);
  }
  void Remove(uint32_t slot);

  // Writes the layout's whole state, its eviction order's included
  // (Planner::SaveState). Load reads it back into a layout of the same
  // number of slots and eviction kind, replacing its state; false
  // (in->status() names the field) for a stream that does not fit. Row
  // handles are checked against `num_rows`, the directory's handles.
  void Save(StateWriter* out) const;
  bool Load(StateReader* in, uint32_t num_rows);

  // Calls fn(slot) for every resident slot, in slot order.
  template <typename Fn>
  void ForEachResident(Fn fn) const {
    for (uint32_t s = 0; s < never_used_; ++s) {
      if (row_at_[s] != kFree) fn(s);
    }
  }

 private:
  static constexpr uint32_t kFree = UINT32_MAX;
  std::vector<uint32_t> row_at_;  // per slot: the row's handle, or kFree
  // Free slots: those freed, a stack (the latest on top), and the ones
  // never used, [never_used_, slots).
  std::vector<uint32_t> freed_;
  uint32_t never_used_ = 0;
  std::unique_ptr<EvictionOrder> order_;
};

}  // namespace herald::scheduler
