#pragma once
// A small, obviously-correct cache planner for worker tests (testonly). It is
// not a scheduling policy (those live in scheduler/): it partitions each
// global batch into contiguous slices, keeps rows cached across iterations
// with LRU eviction, makes a row used by one worker that worker's (owned,
// dirty), pushes gradients of rows used by several, refreshes copies that
// went stale, writes a dirty row back the iteration before another worker
// needs it, and flushes every dirty row at the last iteration — the
// ownership protocol of docs/worker.md, so training must equal the reference.
// Each fetch carries its early distance (how many iterations just before it
// left the row's PS copy unchanged), so executors fetch rows ahead.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/key_batch.h"
#include "plan/step.h"

namespace herald::worker::testing {

struct TestPlannerOptions {
  std::string job_id = "job";
  uint32_t num_workers = 1;
  uint32_t cache_slots = 64;  // per table and worker
  uint32_t num_dense = 0;
};

// steps[t][w]: worker w's step at iteration t (iterations numbered from 0).
// Errors: ResourceExhausted when a worker's keys do not fit its cache.
absl::StatusOr<std::vector<std::vector<plan::Step>>> PlanAll(
    const std::vector<data::KeyBatch>& batches, const TestPlannerOptions& options);

}  // namespace herald::worker::testing
