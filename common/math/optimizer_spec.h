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
// finite, a negative epsilon or accumulator, betas outside [0, 1).
absl::StatusOr<SparseOptimizerConfig> SparseOptimizerFromSpec(const proto::OptimizerSpec& spec,
                                                              const std::string& field);

}  // namespace herald::math
