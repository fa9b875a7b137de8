#pragma once
// How a run continues from where a checkpoint left off (resume_point.h
// reads the checkpoint): the PS shards restored from it, the planner loaded
// from its planner file, and the data stream moved by its data cursor. Each
// part that cannot be used falls back to a slower way to the same place
// (replay, reading the stream), logged; only the shards' restore can fail
// the run.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "ps_server/client/ps_client.h"
#include "scheduler/data/batch_stream.h"
#include "scheduler/jobs/resume_point.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

// Installs `job_id` on every shard: fresh, or restored from `resume`'s
// manifest (a run the shards still hold is dropped first: its scheduler
// died). Errors: the shards' (prefixed "starting the job on the PS"),
// DataLoss when the shards' next iteration is not the checkpoint's.
absl::Status StartJobOnPs(ps::PsClient& ps, const std::string& job_id, const proto::JobSpec& spec,
                          uint32_t num_workers, const ResumePoint& resume);

// The planner continuing from `point`'s planner file at `resume_at` (mode
// LOADED); null when it has none or it cannot be used (logged: the caller
// then replays the planner).
std::unique_ptr<Planner> LoadResumedPlanner(const std::string& job_id, const ResumePoint& point,
                                            const PlannerOptions& options, uint64_t resume_at);

// `stream` (just opened) moved to `resume_at` batches by `point`'s data
// cursor (*mode CURSOR), or a fresh stream where there is none or it does
// not fit (*mode READ; then it has read no batch). Errors: reopening the
// stream's.
absl::StatusOr<std::unique_ptr<BatchStream>> RestoreDataCursor(
    const std::string& job_id, const proto::JobSpec& spec, const ResumePoint& point,
    std::unique_ptr<BatchStream> stream, uint64_t resume_at, proto::DataResume* mode);

}  // namespace herald::scheduler
