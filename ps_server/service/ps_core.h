#pragma once
// Everything one herald_ps process does, independent of gRPC: the jobs it
// holds and the dispatch of each request to its JobShard. The gRPC service
// (ps_service.h) and the in-process client (ps_server/client) both call it,
// so tests without sockets run the same code as the server.

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/thread_pool.h"
#include "common/tunables.h"
#include "proto/checkpoint.pb.h"
#include "proto/ps.pb.h"
#include "ps_server/shard/job_shard.h"

namespace herald::ps {

struct PsCoreOptions {
  // Threads serving the keys of one request (and commits).
  uint32_t threads = tunables::kPsThreads;
  uint32_t stripes_per_table = tunables::kStripesPerTable;
  // Longest a fetch or checkpoint waits for a commit when the caller set no deadline.
  absl::Duration default_wait = absl::Milliseconds(tunables::kPsWaitMs);
  // Observes every checkpoint's progress besides the log (CheckpointProgress;
  // herald_ps_with_test_hooks stalls a checkpoint half written with it).
  CheckpointProgress checkpoint_progress;
  // Bytes of rows a job keeps in memory on this shard (0: all), unless its
  // spec says otherwise (JobSpec.ps.memory_budget_bytes); the rest live in
  // a store under `data_dir`/<job>/shard-<i>-of-<n>.
  uint64_t memory_budget = 0;
  std::string data_dir;
  // A checkpoint that takes longer logs how far it got this often.
  absl::Duration checkpoint_log_every = absl::Milliseconds(tunables::kCheckpointProgressLogMs);
};

class PsCore {
 public:
  explicit PsCore(PsCoreOptions options);

  // Installs a job (or restores it from request.restore_manifest). Starting
  // a job that is already there with the same shard layout, worker count,
  // restore manifest and run is a no-op (retries are safe).
  absl::Status StartJob(const proto::PsStartJobRequest& request,
                        proto::PsStartJobResponse* response);
  // Loads the job described by a checkpoint manifest as shard `shard` of
  // `num_shards` (0: the manifest's count) at process start.
  absl::Status RestoreAtStart(const std::string& manifest_path, uint32_t shard, uint32_t num_shards,
                              proto::PsStartJobResponse* response);
  absl::Status EndJob(const proto::PsEndJobRequest& request);

  // `deadline`: absl::InfiniteFuture() means options.default_wait from now.
  absl::Status Fetch(const proto::FetchRequest& request, absl::Time deadline,
                     proto::FetchResponse* response);
  absl::Status PushGradients(const proto::PushGradientsRequest& request);
  absl::Status WriteBack(const proto::WriteBackRequest& request);
  absl::Status IterationDone(const proto::IterationDoneRequest& request,
                             proto::IterationDoneResponse* response);
  absl::Status Checkpoint(const proto::CheckpointRequest& request, absl::Time deadline,
                          proto::CheckpointResponse* response);
  absl::Status Stats(const proto::PsStatsRequest& request, proto::PsStatsResponse* response);
  absl::Status LookAhead(const proto::LookAheadRequest& request);

  // The shard of a running job, for transports that serve it directly
  // (ucx_ps_server.h). Errors: NotFound naming the jobs there are;
  // FailedPrecondition when `run_id` and the job's run (StartJob's run_id)
  // are both nonzero and differ: a request of a worker of an earlier run.
  absl::StatusOr<std::shared_ptr<JobShard>> Shard(const std::string& job_id, uint64_t run_id = 0);
  // `deadline`, or options.default_wait from now for absl::InfiniteFuture().
  absl::Time Bound(absl::Time deadline) const;

 private:
  struct Job {
    proto::PsStartJobRequest start;  // spec, layout, workers, restore manifest
    std::shared_ptr<JobShard> shard;
  };
  absl::Status Install(const proto::PsStartJobRequest& request,
                       const proto::CheckpointManifest* manifest, const std::string& manifest_dir,
                       proto::PsStartJobResponse* response);

  const PsCoreOptions options_;
  ThreadPool pool_;
  absl::Mutex mu_;
  std::map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::ps
