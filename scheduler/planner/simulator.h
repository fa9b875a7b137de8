#pragma once
// Runs a policy without any PS or worker: plans every global batch of a
// source, replays each plan through the PlanReplay (unless disabled), and
// records the rows moved per iteration and the planner's time per batch.
// Used by `heraldctl simulate` and the scheduler benchmark.

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/key_batch.h"
#include "common/data/sample_block.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

// Fills *out with the next global batch; returns false when there is none.
using BatchSource = std::function<absl::StatusOr<bool>(data::KeyBatch* out)>;

struct CacheSizing {
  std::vector<uint32_t> capacity;  // per table
  std::vector<uint32_t> slots;     // per table
};

// capacity[t] = max(1, round(cache_ratio × distinct_keys[t])): the cache
// ratio is per-worker capacity as a fraction of the data's distinct keys,
// table by table. slots[t] = max(capacity[t], batch_per_worker ×
// max_keys_per_sample[t]) so any iteration's rows fit.
CacheSizing SizeCaches(const std::vector<uint64_t>& distinct_keys,
                       const std::vector<uint32_t>& max_keys_per_sample, double cache_ratio,
                       uint32_t batch_per_worker);

// Raises (*max)[t] to the most keys any sample of `block` has in table t.
void UpdateMaxKeysPerSample(const data::SampleBlock& block, std::vector<uint32_t>* max);

struct IterationRecord {
  PlanCounts total;                 // all workers
  std::vector<PlanCounts> workers;  // by rank
  uint64_t max_worker_rows = 0;     // max over workers of fetched + pushed + written back
  double sched_ms = 0;              // Planner::Plan wall time
  // herald-adaptive: tables the allocator scored for the read-ahead batch
  // allocated during this iteration's plan; -1 for other policies.
  int32_t scored_tables = -1;
  double predicted_ms = 0;       // herald-adaptive: its cost model's planning time
  bool budget_reachable = true;  // herald-adaptive: TableProfiler::budget_reachable
};

struct SimulationResult {
  std::vector<IterationRecord> iterations;
  PlanCounts total;
  uint64_t sum_max_worker_rows = 0;    // Σ over iterations of max_worker_rows
  uint64_t directory_entries_max = 0;  // the planner's row directory, after any plan
  double sched_ms_median = 0;
  double sched_ms_p99 = 0;
  uint64_t plan_digest = 0;  // PlanDigest over every iteration's plan, in order
  // Policy het, checked: the most clocks any read was behind its row's
  // global clock (StalenessChecker::max_behind; ≤ the staleness).
  uint64_t max_staleness_read = 0;
  double hit_rate() const {
    return total.uses == 0 ? 0.0 : static_cast<double>(total.hits) / total.uses;
  }
};

struct SimulationOptions {
  PlannerOptions planner;
  uint64_t max_iterations = 0;  // 0: until the source ends
  bool check = true;            // replay through the PlanReplay
};

// Errors: the source's, the planner's, or the checker's (FailedPrecondition).
absl::StatusOr<SimulationResult> Simulate(const SimulationOptions& options, BatchSource source);

}  // namespace herald::scheduler
