#pragma once
// Where a resumed job starts (checkpoint.resume_from): the checkpoint's
// manifest, the job it belongs to, the first iteration to train and the
// dense half (parameters and dense optimizer state) to start from.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace herald::scheduler {

struct ResumePoint {
  std::string manifest;  // empty: a fresh job
  std::string job_id;    // the job the checkpoint is of
  uint64_t first_iteration = 0;
  std::vector<float> dense, dense_state;
};

// Reads `spec.checkpoint.resume_from`: a MANIFEST path, or a job's
// checkpoint directory (<dir>/<job_id>) for its newest complete periodic
// checkpoint (one with a dense half).
// Errors name `checkpoint.resume_from` and the file: NotFound (no complete
// checkpoint), FailedPrecondition (a checkpoint without the dense half,
// e.g. a job's final one; nothing left to train), InvalidArgument (tables
// that are not the spec's), DataLoss (a dense file of the wrong size or
// checksum).
absl::StatusOr<ResumePoint> ReadResumePoint(const proto::JobSpec& spec);

}  // namespace herald::scheduler
