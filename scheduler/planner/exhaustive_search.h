#pragma once
// The optimum allocation of a tiny instance, found by exhaustive search: a
// quality yardstick for the location-aware allocator and a test of it.
//
// Instance: a short job whose every global batch has exactly one sample per
// worker (per-worker batch 1), at most kMaxWorkers workers. The search
// explores every allocation of every batch (each a permutation of the
// workers) with the policy's own planner — same synchronisation mode, cache
// sizes and eviction — and returns the sequence with the fewest
// transmissions: rows fetched + gradients pushed + rows written back
// (communication plans, dirty evictions and the final flush). Only the
// allocation is searched, so heuristic / optimum measures the allocator.
//
// Method: depth-first over the batches, branch and bound. A batch's cost is
// known once the next batch is allocated (its communication plan depends on
// it) and costs only accumulate, so a branch is cut when its cost so far
// plus a lower bound of the remaining batches' cost (a fetch per row first
// used in them, one push or write-back per row they train) reaches the best
// sequence found; the first bound is the policy's own allocation. The first batch is given
// the identity allocation: with every cache empty, relabelling the workers
// changes no cost. Each node plans one batch on a copy of its parent's
// planner (Planner::Clone), so the work is about (W!)^(K−1) plans of W
// samples for K batches and W workers, minus what the bound prunes.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/key_batch.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

struct ExhaustiveOptions {
  // The planner of every explored allocation; its policy's allocation is
  // the heuristic compared with the optimum.
  PlannerOptions planner;
  // Batches planned at most (search nodes); beyond it the search fails with
  // ResourceExhausted rather than run for hours.
  uint64_t max_plans = 20'000'000;
  // false: no bound, every leaf visited (a test of the pruning).
  bool prune = true;
};

struct ExhaustiveResult {
  uint64_t optimum = 0;    // fewest transmissions over every allocation sequence
  uint64_t heuristic = 0;  // transmissions under the policy's own allocation
  // The optimum's allocation: worker of each sample, per batch.
  std::vector<std::vector<uint32_t>> allocation;
  uint64_t plans = 0;  // batches planned by the search
};

inline constexpr uint32_t kMaxExhaustiveWorkers = 8;

// Errors: InvalidArgument (no batches, more than kMaxExhaustiveWorkers
// workers, a batch whose size is not the worker count), ResourceExhausted
// (max_plans reached), and the planner's errors.
absl::StatusOr<ExhaustiveResult> SearchOptimalAllocation(
    const ExhaustiveOptions& options, const std::vector<data::KeyBatch>& batches);

// Transmissions of one plan: Σ over workers of fetched + pushed + written back.
uint64_t Transmissions(const IterationPlan& plan);

// Transmissions of the whole job under the options' own allocation (a fresh
// planner over every batch). Errors: the planner's.
absl::StatusOr<uint64_t> PolicyTransmissions(const PlannerOptions& options,
                                             const std::vector<data::KeyBatch>& batches);

}  // namespace herald::scheduler
