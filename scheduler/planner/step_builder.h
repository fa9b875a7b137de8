#pragma once
// A worker's step for one iteration: its samples of the global batch (labels,
// dense features) with the slots and cache plan the planner chose, encoded
// straight into the wire message (no intermediate plan::Step copy).

#include <string>

#include "common/data/key_batch.h"
#include "proto/scheduler.pb.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

// REQUIRES: plan was made for `batch`; batch.dense has num_dense values per sample.
proto::WorkerStep BuildStep(const data::KeyBatch& batch, uint32_t num_dense,
                            const IterationPlan& plan, uint32_t worker, const std::string& job_id);

}  // namespace herald::scheduler
