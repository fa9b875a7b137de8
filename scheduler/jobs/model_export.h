#pragma once
// Writes a trained model in the export format (docs/export.md):
//
//   <out_dir>/MODEL                                 text-format proto::ModelExport
//   <out_dir>/dense.f32                             dense parameters, float32 LE
//   <out_dir>/<job_id>/iter-<N>/shard-<i>-of-<n>.hsf  embedding rows (checkpoint format)
//   <out_dir>/<job_id>/iter-<N>/MANIFEST
//
// The shard files are written by the PS shards themselves (PS Checkpoint),
// so `out_dir` must be a path they can write too. MODEL is written last via
// a temporary file and a rename: a directory with MODEL is a complete export.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "ps_server/client/ps_client.h"

namespace herald::scheduler {

inline constexpr char kModelExportFile[] = "MODEL";
inline constexpr char kDenseExportFile[] = "dense.f32";
// An increment's deleted rows (row expiry; checkpoint/deleted_rows.h).
inline constexpr char kDeletedExportFile[] = "deleted.bin";

struct TrainedModel {
  std::string job_id;
  proto::JobSpec spec;
  uint64_t iterations = 0;  // iterations trained (the PS committed 0..iterations-1)
  uint32_t num_workers = 0;
  std::vector<float> dense;
};

// With `since` (an earlier export of this training, absolute), an
// increment: only the rows that differ from its model (export_increment.h).
// Errors: InvalidArgument (relative out_dir, no iterations, no dense
// parameters), AlreadyExists (out_dir already holds an export), the PS
// checkpoint's, KeepChangedRows', Internal for a file that cannot be
// written.
absl::StatusOr<proto::ExportJobResponse> WriteModelExport(const TrainedModel& model,
                                                          ps::PsClient* ps,
                                                          const std::string& out_dir,
                                                          const std::string& since = "");

// The same export from a succeeded job's final checkpoint
// (CheckpointManifest.final, `final_manifest`): its shard files are copied
// into out_dir, its dense parameters written as dense.f32. What exports a
// job whose tables the PS shards no longer hold for it (a later job
// started, or the scheduler that ran it restarted). Errors: those of
// WriteModelExport for out_dir, FailedPrecondition (not a final
// checkpoint), DataLoss naming a file that is missing or whose checksum is
// not the manifest's (checked before anything is written), Internal for a
// file that cannot be copied or written.
absl::StatusOr<proto::ExportJobResponse> ExportFinalCheckpoint(const std::string& final_manifest,
                                                               const std::string& out_dir,
                                                               const std::string& since = "");
// The same from any checkpoint of a job with its dense half (a periodic
// one: the parameters without the optimizer's state): what
// exports.every_iterations makes during training.
absl::StatusOr<proto::ExportJobResponse> ExportCheckpoint(const std::string& checkpoint_manifest,
                                                          const std::string& out_dir,
                                                          const std::string& since = "");

}  // namespace herald::scheduler
