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
  // The run that wrote the checkpoint: its spec and worker count.
  proto::JobSpec spec;
  uint32_t num_workers = 0;
  // Its planner's state (Planner::SaveState), checked intact by
  // ReadResumePoint; empty path for a checkpoint without one.
  std::string planner_file;
  uint64_t planner_bytes = 0;
  std::string planner_checksum;
};

// Files beside a checkpoint (in its directory, each its bytes and their
// CRC-32), not in the manifest: a checkpoint without one, or with a damaged
// one, is still whole, and the resumed job does without it.
// The data cursor (BatchStream::SaveCursor): without it the resumed job
// reads its way to its place.
inline constexpr char kDataCursorFile[] = "data.bin";
// The job's cache sizing (SaveCacheSizing): without it the resumed job
// reads its data once more to size its caches.
inline constexpr char kCacheSizingFile[] = "sizing.bin";
// Writes `bytes` as file `name` of checkpoint directory `dir`, atomically
// but not fsynced (after a crash it may be missing or fail its CRC: then
// unused).
absl::Status WriteBesideCheckpoint(const std::string& dir, const char* name,
                                   const std::string& bytes);
// File `name` beside `point`'s manifest. Errors: NotFound (none), DataLoss
// (damaged).
absl::StatusOr<std::string> ReadBesideCheckpoint(const ResumePoint& point, const char* name);

// Whether the run resuming from `point` with `spec` on `num_workers`
// workers trains exactly as the run that wrote the checkpoint did (the same
// spec apart from checkpoint.resume_from, .dir and .keep_last, the same
// number of workers): then
// its planner can be replayed to the checkpoint's state, and the resumed
// job ends with the bits of the uninterrupted one (cache_refill.h).
bool ContinuesSameTraining(const ResumePoint& point, const proto::JobSpec& spec,
                           uint32_t num_workers);

// Reads `spec.checkpoint.resume_from`: a MANIFEST path, or a job's
// checkpoint directory (<dir>/<job_id>) for its newest complete periodic
// checkpoint (one with a dense half).
// Errors name `checkpoint.resume_from` and the file: NotFound (no complete
// checkpoint), FailedPrecondition (a checkpoint without the dense half,
// e.g. a job's final one; nothing left to train), InvalidArgument (tables
// that are not the spec's), DataLoss (a dense file of the wrong size or
// checksum).
absl::StatusOr<ResumePoint> ReadResumePoint(const proto::JobSpec& spec);

// The bytes of `point`'s planner file. Errors: DataLoss naming the file
// when it is missing or its size or checksum is not the manifest's.
absl::StatusOr<std::string> ReadPlannerState(const ResumePoint& point);

}  // namespace herald::scheduler
