#pragma once
// Job spec -> model, with field-level errors for every shape the models
// cannot take. Dense parameters are initialised from the job seed, so every
// worker and the reference trainer build bit-identical models.

#include <memory>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

// The model's input shape from the spec: num_dense, and one bag per sparse
// feature (its table's dim, its pooling, the table it looks up); without
// a schema, feature t is table t.
ModelShape ShapeFromSpec(const proto::JobSpec& spec);

// Errors: InvalidArgument naming the field (common/model_spec_check.h).
absl::StatusOr<std::unique_ptr<RecModel>> CreateModel(const proto::JobSpec& spec, Device* device);

}  // namespace herald::worker
