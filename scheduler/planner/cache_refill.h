#pragma once
// Bitwise resume: a job resumed from its own periodic checkpoint replays its
// planner over the iterations before it (the plans are a deterministic
// function of the batches and the options), so the planner is in the very
// state it had at the checkpoint: the same caches, eviction order and
// directory, and so the same allocations from then on. The restarted
// workers' caches are empty, though. The first plan after the checkpoint
// is therefore given a refill: every row a worker's cache held that this
// plan keeps in its slot and does not fill itself is fetched into that slot
// from the PS. A checkpoint iteration writes every dirty row back, so the
// PS copy is the cached copy (or newer, for a stale copy no plan trains
// without fetching it again).

#include <cstdint>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

// Per worker, per table: the (slot, key) of every cached row, slot order.
using CachedRows = std::vector<std::vector<std::vector<std::pair<uint32_t, Key>>>>;

// What `planner`'s caches hold now (between two plans).
CachedRows CachedRowsOf(const Planner& planner);

// Adds the refill to `plan`, the plan `planner` made right after
// CachedRowsOf(planner) returned `before`: to each worker's fetch list, every
// (slot, key) of `before` that the planner still holds in that slot after
// the plan and that the plan does not fetch, initialise or receive into it.
// The plan's evictions go: they are of rows of `before`, which the
// restarted worker never received. The rows are counted as fetched.
// Returns how many rows it added. REQUIRES: the plan before `before`
// flushed (every cached row clean), so no eviction writes a row back.
uint64_t AddCacheRefill(const CachedRows& before, const Planner& planner, IterationPlan* plan);

}  // namespace herald::scheduler
