#pragma once
// Job-spec optimizer settings -> SparseOptimizerConfig, with the documented
// defaults (docs/configuration.md) and field-level errors.

#include <string>

#include "absl/status/statusor.h"
#include "common/math/sparse_optimizer.h"
#include "proto/job.pb.h"

namespace herald::math {

// `field` names the spec field in errors, e.g. "tables[2].optimizer".
// Errors: InvalidArgument for an unset kind, a learning rate <= 0 or not
// finite, a negative epsilon or accumulator, betas outside [0, 1), a
// schedule ScheduleFromSpec refuses, a weight decay < 0, or one outside
// `field` "dense_optimizer".
absl::StatusOr<SparseOptimizerConfig> SparseOptimizerFromSpec(const proto::OptimizerSpec& spec,
                                                              const std::string& field);

// Errors: InvalidArgument naming `field`.<name>: a step decay without
// step_every or with step_factor outside (0, 1], a cosine decay without
// decay_iterations or with min_factor outside [0, 1], counts above 2^40.
absl::StatusOr<LearningRateSchedule> ScheduleFromSpec(const proto::LearningRateSchedule& spec,
                                                      const std::string& field);

}  // namespace herald::math

namespace herald::math {

// The sparse optimizer of table `table` of the job: the table's own if its
// kind is set, else the job's sparse_optimizer. Errors name the field used.
absl::StatusOr<SparseOptimizerConfig> TableOptimizerFromSpec(const proto::JobSpec& spec, int table);

// A row's initial values scale: `init_scale` if > 0, else 1/sqrt(dim).
float EffectiveInitScale(float init_scale, uint32_t dim);

// The row every table starts with for `key` (values, then optimizer state):
// a pure function of (seed, table, key), identical on PS and workers.
void InitialRow(uint64_t seed, uint32_t table, uint64_t key, uint32_t dim, float init_scale,
                const SparseOptimizerConfig& optimizer, float* row);

}  // namespace herald::math
