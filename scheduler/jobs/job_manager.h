#pragma once
// Job lifecycle: submitted jobs queue (QUEUED) and run one at a time
// (RUNNING) once enough live nodes are registered: every live PS shard
// (ranks 0..N-1 without gaps) and num_workers live workers (0: every live
// worker, at least one). A job ends SUCCEEDED, FAILED (with the reason) or
// CANCELLED. The last succeeded job stays installed on the PS shards (for
// export) until the next job starts. State lives in memory: a restarted
// scheduler forgets its jobs. Thread-safe.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/tunables.h"
#include "scheduler/jobs/job_run.h"
#include "scheduler/membership/kv_rendezvous.h"
#include "scheduler/membership/node_registry.h"
#include "scheduler/store/job_store.h"

namespace herald::scheduler {

struct JobManagerOptions {
  JobRunOptions run;
  absl::Duration poll = absl::Milliseconds(tunables::kSchedulerPollMs);  // re-check nodes
  // Where every job is recorded at submission and at each change of state
  // (not owned; null: jobs live in memory only).
  JobStore* store = nullptr;
  // Jobs read back from `store` when the scheduler starts: the queued ones
  // are queued again; one that was running failed with the restart (resume
  // from a checkpoint is not built); ended ones are listed as they ended
  // (not exportable: their tables left the PS with the previous scheduler).
  std::vector<StoredJob> restored;
};

// What JobManager::Status adds beyond state and progress.
struct JobStatusDetail {
  bool losses = false;   // every completed iteration's loss
  bool history = false;  // the job's history (job_history.h)
  bool spec = false;     // the spec as run, defaults filled in
};

class JobManager {
 public:
  JobManager(NodeRegistry* registry, KvRendezvous* rendezvous, JobManagerOptions options);
  // Stop(), then joins the job thread.
  ~JobManager();
  // Stops the running job and wakes every waiter: JoinJob and WatchJob
  // calls return at once, so a server shutting down is not held by them.
  // The job ends cancelled, unless there is a job store and the user did
  // not cancel it: then it stays as the store recorded it (running, with
  // its newest periodic checkpoint), for a scheduler restarted on the same
  // store to resume. Idempotent; safe from any thread.
  void Stop();

  // Errors: the spec's validation error (nothing is queued).
  absl::StatusOr<std::string> Submit(const proto::JobSpec& spec);
  // One job, or every job when `job_id` is empty. Errors: NotFound.
  absl::StatusOr<std::vector<proto::JobStatus>> Status(const std::string& job_id,
                                                       JobStatusDetail detail = {}) const;
  // Errors: NotFound; FailedPrecondition for a job that already ended.
  absl::Status Cancel(const std::string& job_id);
  // Waits up to `wait` for any job state change after `*version`, then
  // returns the job's status and sets *version to the current one.
  // Errors: NotFound; Unavailable once Stop() was called.
  absl::StatusOr<proto::JobStatus> WaitForUpdate(const std::string& job_id, uint64_t* version,
                                                 absl::Duration wait);

  // Worker side. Join waits up to `wait` for a running job that includes
  // the worker and that it has not joined yet. `address` must be the one
  // the node registered with (a process asking under a node id from before
  // a scheduler restart, which another node may hold now, is refused).
  // Errors: NotFound when there is none yet; FailedPrecondition for such a
  // stale id (the node must register again).
  absl::StatusOr<proto::JoinJobResponse> Join(const std::string& node_id,
                                              const std::string& address, absl::Duration wait);
  // The running job that includes the worker. Errors: NotFound.
  absl::StatusOr<std::shared_ptr<JobRun>> RunOfWorker(const std::string& node_id) const;
  // A worker's messages below name the job and its run (JoinJobResponse):
  // those of another job are refused NotFound, those of an earlier run of
  // the running job (a worker still ending it after a recovery or a
  // scheduler restart) FailedPrecondition, and neither changes anything.
  absl::Status Report(const proto::StepReport& report);
  // JobRun::ReportEval of the running job.
  absl::Status ReportEval(const proto::EvalReport& report);
  // Rank 0's trained dense parameters for the running job `job_id`.
  // Errors: as Report, JobRun::AcceptDense's.
  absl::Status AcceptDense(const std::string& node_id, const std::string& job_id,
                           std::vector<float> values, const DenseUpload& meta = {});
  // Writes the model of `job_id` to `out_dir` (model_export.h). Errors:
  // NotFound; FailedPrecondition for a job that did not succeed or whose
  // tables left the PS shards (a later job started); the export's.
  // With `since`, an increment of that earlier export.
  absl::StatusOr<proto::ExportJobResponse> Export(const std::string& job_id,
                                                  const std::string& out_dir,
                                                  const std::string& since = "");

  static bool IsTerminal(proto::JobState state);

  // What the metrics endpoint shows: every job's status, and for the running
  // job its step queue depths and PS shard statistics.
  struct Snapshot {
    std::vector<proto::JobStatus> jobs;
    std::string running_job;  // empty: none
    std::vector<size_t> queue_depths;
    std::vector<proto::PsStatsResponse> ps_stats;
  };
  Snapshot TakeSnapshot() const;

 private:
  // The running run of `job_id` if it is run `run_id`; errors as Report.
  absl::StatusOr<std::shared_ptr<JobRun>> CurrentRun(const std::string& job_id,
                                                     uint64_t run_id) const;

  struct Job {
    std::string id;
    proto::JobSpec spec;
    proto::JobState state = proto::JOB_QUEUED;
    std::string reason;
    int64_t submitted_ms = 0;
    int64_t finished_ms = 0;
    std::shared_ptr<JobRun> run;
    proto::JobProgress final_progress;
    uint64_t number = 0;        // N of "job-N"
    JobRunOptions run_options;  // the job's runs: its checkpoint callback
    uint32_t recoveries = 0;
    std::vector<std::string> recovery_causes;
    uint64_t iterations_retrained = 0;  // JobStatus.iterations_retrained
    std::string last_checkpoint;        // newest periodic checkpoint of any of its runs
    // Its history as of its last record (restored with it), and once it ended.
    std::vector<proto::HistoryPoint> history;
    bool cancel_requested = false;  // by the user (Cancel), not by a shutdown
  };

  void Loop();
  // After `job`'s run failed with `failure`: waits for the nodes to settle
  // (a liveness timeout, so dead ones are known dead) and for enough live
  // ones (up to recovery.timeout_s), then returns a new run resuming the job
  // from its newest periodic checkpoint, already installed as the running
  // one. Errors: `failure` itself, with every earlier cause, when the job
  // is not to be recovered (cancelled, no checkpoint, attempts used up, no
  // nodes in time, the scheduler stopping).
  absl::StatusOr<std::shared_ptr<JobRun>> Recover(Job* job, const absl::Status& failure);
  // The nodes the job runs on, or nothing yet.
  // Live nodes count, except a suspect (a node of a run that failed) that
  // has not heartbeated twice since it became one.
  bool PickNodes(const proto::JobSpec& spec, std::vector<NodeInfo>* ps,
                 std::vector<NodeInfo>* workers) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  proto::JobStatus StatusLocked(const Job& job, JobStatusDetail detail = {}) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void Finish(Job* job, const absl::Status& outcome) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the job to options_.store (if any). Errors: the store's.
  absl::Status Record(const Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Restore(std::vector<StoredJob> jobs) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  NodeRegistry* registry_;
  KvRendezvous* rendezvous_;
  const JobManagerOptions options_;

  mutable absl::Mutex mu_;
  // Nodes of a failed run: their heartbeat count when it failed, and when.
  // One that died heartbeats at most once more (one in flight), so it is not
  // placed (PickNodes) though the liveness timeout has not declared it dead
  // yet; one alive is placed again after two more heartbeats.
  struct Suspect {
    uint64_t heartbeats = 0;
    absl::Time since;
  };
  absl::flat_hash_map<std::string, Suspect> suspects_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::unique_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);  // submission order
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<JobRun> running_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<JobRun> kept_on_ps_ ABSL_GUARDED_BY(mu_);  // last succeeded job
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace herald::scheduler
