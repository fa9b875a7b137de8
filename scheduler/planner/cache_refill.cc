#include "scheduler/planner/cache_refill.h"

#include "absl/container/flat_hash_set.h"

namespace herald::scheduler {

CachedRows CachedRowsOf(const Planner& planner) {
  const PlannerOptions& o = planner.options();
  CachedRows rows(o.num_workers);
  for (uint32_t w = 0; w < o.num_workers; ++w) {
    rows[w].resize(o.capacity.size());
    for (uint32_t t = 0; t < o.capacity.size(); ++t) {
      planner.ForEachCachedRow(w, t,
                               [&](uint32_t slot, Key key) { rows[w][t].emplace_back(slot, key); });
    }
  }
  return rows;
}

uint64_t AddCacheRefill(const CachedRows& before, const Planner& planner, IterationPlan* plan) {
  const CachedRows after = CachedRowsOf(planner);
  uint64_t added = 0;
  for (size_t w = 0; w < before.size(); ++w) {
    WorkerPlan& worker = plan->workers[w];
    for (size_t t = 0; t < before[w].size(); ++t) {
      plan::TablePlan& table = worker.tables[t];
      table.evict.slots.clear();
      table.evict.keys.clear();
      absl::flat_hash_set<uint32_t> filled(table.fetch.slots.begin(), table.fetch.slots.end());
      filled.insert(table.init.slots.begin(), table.init.slots.end());
      filled.insert(table.receive.slots.begin(), table.receive.slots.end());
      absl::flat_hash_set<std::pair<uint32_t, Key>> kept(after[w][t].begin(), after[w][t].end());
      for (const auto& [slot, key] : before[w][t]) {
        if (filled.contains(slot) || !kept.contains({slot, key})) continue;
        table.fetch.slots.push_back(slot);
        table.fetch.keys.push_back(key);
        if (!table.fetch.early.empty()) table.fetch.early.push_back(0);
        ++worker.counts.fetched;
        ++added;
      }
    }
  }
  return added;
}

}  // namespace herald::scheduler
