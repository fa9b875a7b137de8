#pragma once
// A running job's checkpoints (checkpoint.*, docs/checkpoints.md): the
// periodic ones after a flush iteration (the dense half worker rank 0
// uploaded for it, the planner state, every shard's file, the manifest,
// the data cursor, then pruning to checkpoint.keep_last) and the final one
// at the job's end (the trained dense parameters, marked final).
// Thread-safe: uploads arrive on RPC threads while the job's thread writes.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/job.pb.h"
#include "ps_server/client/ps_client.h"

namespace herald::scheduler {

// Beside a job's exports (<exports.dir>/<job>/LATEST): the newest complete
// export's directory name ("iter-000000000099") and a newline, replaced
// atomically after each export, for a serving system to load.
inline constexpr char kLatestExportFile[] = "LATEST";

// What one checkpoint wrote.
struct WrittenCheckpoint {
  std::string manifest;  // its path
  uint64_t bytes = 0;    // every file's, the shards' included
  double write_ms = 0;   // the slowest shard's writing time
};

class JobCheckpointer {
 public:
  // REQUIRES: spec.checkpoint().dir() is set.
  JobCheckpointer(std::string job_id, const proto::JobSpec& spec, uint32_t num_workers);

  // The job's cache sizing (SaveCacheSizing), written beside every
  // periodic checkpoint from now on.
  void KeepCacheSizing(std::string bytes);

  // Rank 0's dense parameters and their `state_floats` trailing floats of
  // optimizer state, for the checkpoint after `iteration`.
  void AcceptDense(uint64_t iteration, std::vector<float> floats, uint64_t state_floats);

  // The checkpoint after flush iteration `iteration`, once every worker
  // reported it: the dense half uploaded for it (and those of earlier
  // iterations are dropped), `planner_state` (Planner::SaveState) and every
  // shard's file, then the manifest; `data_cursor` beside it when there is
  // one (a checkpoint without it is still whole). Prunes to keep_last.
  // Errors: Internal (no dense half uploaded), the writes' and shards'
  // (RefusedByStorage tells a storage refusal).
  absl::StatusOr<WrittenCheckpoint> WritePeriodic(ps::PsClient& ps, uint64_t iteration,
                                                  const std::string& planner_state,
                                                  const absl::StatusOr<std::string>& data_cursor);
  // The final checkpoint after the last iteration `iteration`, with the
  // trained dense parameters; prunes. Returns the manifest's path.
  absl::StatusOr<std::string> WriteFinal(ps::PsClient& ps, uint64_t iteration,
                                         const std::vector<float>& dense);
  // Removes what was written of the checkpoint of `iteration` (after a
  // failure: never a complete checkpoint).
  void RemovePartial(uint64_t iteration) const;

  // A checkpoint the storage refused (RESOURCE_EXHAUSTED: full;
  // PERMISSION_DENIED: read-only or refused): training may go on without it.
  static bool RefusedByStorage(const absl::Status& status);

 private:
  struct Dense {
    std::vector<float> floats;
    uint64_t state_floats = 0;
  };
  void Prune() const;
  // With exports.every_iterations or every_minutes: where due (`final`,
  // the iteration count, or the time since the previous export or the
  // run's start), the export of the checkpoint at `manifest` (after
  // `iteration`) into <exports.dir>/<job>/iter-<N>, whole or since the
  // previous one, then LATEST pointed at it; a failure is logged and the
  // next export is whole again (training goes on).
  void ExportIfDue(const std::string& manifest, uint64_t iteration, bool final);

  const std::string job_id_;
  const proto::JobSpec spec_;
  const uint32_t num_workers_;
  absl::Mutex mu_;
  std::map<uint64_t, Dense> dense_ ABSL_GUARDED_BY(mu_);  // by iteration
  std::string last_export_;                               // the job's thread alone
  absl::Time last_export_time_ = absl::Now();             // or the run's start; likewise
  std::string cache_sizing_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::scheduler
