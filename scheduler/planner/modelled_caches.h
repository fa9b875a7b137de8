#pragma once
// Every worker's cache slots of every table as an independent checker of
// the planner models them (PlanReplay, StalenessChecker): the copy each
// slot holds and the slot of each held key. One model, so the checkers
// agree on what a slot is; each keeps its own Copy (the states it tracks).
// Shares nothing with the planner's own layouts (cache_layout.h).

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"

namespace herald::scheduler {

// One worker's slots of one table. Copy: default-constructed for an empty
// slot.
template <typename Copy>
struct ModelledTable {
  std::vector<Copy> slots;
  absl::flat_hash_map<Key, uint32_t> slot_of;  // the held keys' slots
};

// caches[w][t]: worker w's table t, with slots[t] slots each.
template <typename Copy>
class ModelledCaches {
 public:
  ModelledCaches(uint32_t num_workers, const std::vector<uint32_t>& slots) : workers_(num_workers) {
    for (std::vector<ModelledTable<Copy>>& tables : workers_) {
      for (uint32_t n : slots) {
        ModelledTable<Copy> table;
        table.slots.resize(n);
        tables.push_back(std::move(table));
      }
    }
  }

  std::vector<ModelledTable<Copy>>& operator[](uint32_t w) { return workers_[w]; }
  const std::vector<ModelledTable<Copy>>& operator[](uint32_t w) const { return workers_[w]; }
  uint32_t num_workers() const { return static_cast<uint32_t>(workers_.size()); }

 private:
  std::vector<std::vector<ModelledTable<Copy>>> workers_;
};

}  // namespace herald::scheduler
