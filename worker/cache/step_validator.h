#pragma once
// Checks a whole step (samples + cache plan) against the cache before any of
// it runs, so a plan that does not fit is rejected, never executed half-way.
// Per table, with the plan's effects applied in execution order:
//   evict:     slot in range, listed once, holds the named key;
//   fetch:     slot in range and listed once; the key fetched once, not held
//              in another slot, not evicted dirty by this same plan (the
//              fetch would read the PS before that write-back lands); the
//              slot empty, or holding that key clean/stale (a refresh) —
//              never over a dirty row (its newest copy would be lost);
//   train:     owned and shared slots in range, distinct, holding a usable
//              (clean or dirty) row, shared keys match; every slot a sample
//              uses is owned or shared, and every owned or shared slot is
//              used by some sample;
//   hold:      like owned (policy het: trained, gradients held), keys
//              match; a held slot is never overwritten by a landing;
//   flush:     slot listed once, holds the named key with held gradients
//              after training, not pushed this step;
//   write-back: slot listed once, holds the named key, is dirty after
//              training (owned now or before), and is not shared.
// Errors: InvalidArgument naming table, list, index, slot and key.
//
// Independent of the planner's code on purpose: the worker trusts nothing
// it receives, and this is a second, separate implementation of the cache
// rules (the scheduler's PlanReplay, scheduler/planner/plan_replay.h,
// checks the planner's output against its own model of every cache), so a
// planner bug is refused here instead of executed.

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "common/thread_pool.h"
#include "plan/step.h"
#include "worker/cache/embedding_cache.h"

namespace herald::worker {

absl::Status ValidatePlan(const EmbeddingCache& cache, const plan::Step& step);

struct CheckScratch;  // step_validator.cc

// ValidatePlan with memory kept from one step to the next (per-slot sets
// sized to the largest table, cleared in O(1)): a worker checks every step
// with one. With threads > 1 the tables are checked in parallel, each
// thread with its own sets (memory grows with threads); the error is still
// the one of the first failing table. Not thread-safe.
class StepValidator {
 public:
  explicit StepValidator(int threads = 1);
  ~StepValidator();
  absl::Status Check(const EmbeddingCache& cache, const plan::Step& step);

 private:
  std::vector<std::unique_ptr<CheckScratch>> scratch_;  // one per thread
  std::unique_ptr<ThreadPool> pool_;                    // null: one thread
};

}  // namespace herald::worker
