#pragma once
// Validation of a submitted job spec before anything starts: every error
// names the field and the reason (e.g. "global_batch_size: must be > 0").

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace herald::scheduler {

// Errors: InvalidArgument naming the field; Unimplemented for a feature that
// is not built (checkpoint.every_iterations > 0).
absl::Status ValidateJobSpec(const proto::JobSpec& spec);

}  // namespace herald::scheduler
