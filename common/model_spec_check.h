#pragma once
// The shapes a job spec's model section may take (model kind, MLP widths,
// embedding dims per model, a model graph's nodes: model_graph.h): checked by the scheduler when a
// job is submitted and by the worker's model factory before it builds a model.

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace herald {

// Errors: InvalidArgument naming the field (e.g. "model.bottom_mlp: last
// width 32 must equal the embedding dim 16 (DLRM)").
absl::Status ValidateModelSpec(const proto::JobSpec& spec);

}  // namespace herald
