#pragma once
// plan::Step ⇄ proto::WorkerStep. Decoding checks every byte length and
// count (the plan's through plan_codec.h); the plan's meaning is checked
// against the cache by the worker (worker/cache/step_validator.h).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "plan/step.h"
#include "proto/scheduler.pb.h"

namespace herald::plan {

// Errors: InvalidArgument naming the field, e.g. "samples.tables[3].offsets:
// 20 bytes, want 4 × (num_samples + 1) = 36".
absl::StatusOr<Step> DecodeWorkerStep(const proto::WorkerStep& step, uint32_t num_tables,
                                      uint32_t num_dense);

// The inverse, for tests and tools; the scheduler encodes its steps without
// building a Step (scheduler/planner/step_builder.h).
proto::WorkerStep EncodeWorkerStep(const Step& step);

// Appends one proto::StepSamples::TableSlots per entry of `tables`
// (table_id = index).
void EncodeTableSamples(const std::vector<TableSamples>& tables, proto::StepSamples* out);

}  // namespace herald::plan
