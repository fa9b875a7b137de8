#include "scheduler/jobs/job_resume.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status.h"

namespace herald::scheduler {

absl::Status StartJobOnPs(ps::PsClient& ps, const std::string& job_id, const proto::JobSpec& spec,
                          uint32_t num_workers, const ResumePoint& resume) {
  if (!resume.manifest.empty()) {
    // A run of this job that the shards still hold (its scheduler died)
    // gives way to the restored one; shards without it answer NotFound.
    ps.EndJob(job_id).IgnoreError();
  }
  absl::StatusOr<uint64_t> next =
      ps.StartJob(job_id, spec, num_workers, resume.manifest, resume.job_id);
  if (!next.ok()) {
    return absl::Status(next.status().code(),
                        absl::StrCat("starting the job on the PS: ", next.status().message()));
  }
  if (*next != resume.first_iteration) {
    return absl::DataLossError(absl::StrCat("the PS shards start at iteration ", *next,
                                            ", the checkpoint at ", resume.first_iteration));
  }
  return absl::OkStatus();
}

std::unique_ptr<Planner> LoadResumedPlanner(const std::string& job_id, const ResumePoint& point,
                                            const PlannerOptions& options, uint64_t resume_at) {
  if (point.planner_file.empty()) return nullptr;  // a checkpoint of an older version
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> bytes = ReadPlannerState(point);
  PlannerOptions at = options;
  at.first_iteration = resume_at;
  absl::StatusOr<std::unique_ptr<Planner>> loaded =
      bytes.ok() ? Planner::LoadState(at, *bytes) : bytes.status();
  if (!loaded.ok()) {
    HLOG_WARN("job {}: the planner state of {} is not usable ({}); replaying the planner instead",
              job_id, point.manifest, std::string(loaded.status().message()));
    return nullptr;
  }
  HLOG_INFO("job {}: planner state loaded from {} ({} bytes) in {:.0f} ms", job_id,
            point.planner_file, bytes->size(), absl::ToDoubleMilliseconds(absl::Now() - start));
  return *std::move(loaded);
}

absl::StatusOr<std::unique_ptr<BatchStream>> RestoreDataCursor(
    const std::string& job_id, const proto::JobSpec& spec, const ResumePoint& point,
    std::unique_ptr<BatchStream> stream, uint64_t resume_at, proto::DataResume* mode) {
  *mode = proto::DATA_RESUME_READ;
  absl::StatusOr<std::string> cursor = ReadBesideCheckpoint(point, kDataCursorFile);
  absl::Status restored = cursor.ok() ? stream->RestoreCursor(*cursor) : cursor.status();
  if (restored.ok() && stream->batches() != resume_at) {
    restored = absl::DataLossError(
        absl::StrCat("the data cursor is after batch ", stream->batches(), ", not ", resume_at));
  }
  if (restored.ok()) {
    *mode = proto::DATA_RESUME_CURSOR;
    HLOG_INFO("job {}: data stream resumed after batch {} from its cursor", job_id, resume_at);
    return stream;
  }
  HLOG_INFO("job {}: reading the data stream up to batch {} ({})", job_id, resume_at,
            std::string(restored.message()));
  // A restore that failed may have moved the stream: start it afresh.
  if (cursor.ok()) {
    HERALD_ASSIGN_OR_RETURN(stream, BatchStream::Open(StreamOptionsFromSpec(spec, Split::kTrain)));
  }
  return stream;
}

}  // namespace herald::scheduler
