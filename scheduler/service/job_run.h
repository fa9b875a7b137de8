#pragma once
// One running job: sizes the caches from the data, installs the job on the
// PS shards, plans every global batch (read ahead by the data loader) and
// feeds each worker's bounded step queue, then follows the workers' reports
// until every worker has reported the last iteration. Evaluates the model on
// the held-out samples as eval.* asks (EvaluateAt). Fails the job (with
// the reason) on a planning or data error, a worker error report, a worker
// or PS shard that stops heartbeating, or Cancel().
//
// Thread model: Run() on the job manager's thread; Join/Queue/Report/
// Progress from RPC threads.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "checkpoint/manifest.h"
#include "common/rpc/channel.h"
#include "common/tunables.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "ps_server/client/ps_client.h"
#include "scheduler/service/eval_round.h"
#include "scheduler/service/held_out.h"
#include "scheduler/service/job_history.h"
#include "scheduler/service/node_registry.h"
#include "scheduler/service/resume_point.h"
#include "scheduler/service/step_queue.h"

namespace herald::scheduler {

// What an UploadDense stream carried besides the floats (DenseChunk).
struct DenseUpload {
  bool checkpoint = false;  // for the checkpoint after `iteration`
  uint64_t iteration = 0;
  uint64_t state_floats = 0;  // trailing floats of dense optimizer state
  uint64_t run_id = 0;        // the uploading worker's run (JoinJobResponse)
};

class Planner;      // scheduler/planner/planner.h
class BatchStream;  // scheduler/service/batch_stream.h
struct PlannerOptions;

struct JobRunOptions {
  size_t step_queue_capacity = tunables::kStepQueueCapacity;  // steps per worker (back-pressure)
  uint32_t planner_threads = tunables::kPlannerThreads;       // PlannerOptions::threads
  // How often waits wake to check cancellation and node liveness.
  absl::Duration poll = absl::Milliseconds(tunables::kSchedulerPollMs);
  // Time for every worker to join and open its step stream.
  absl::Duration join_timeout = absl::Milliseconds(tunables::kJobJoinTimeoutMs);
  // TLS settings for the scheduler's channels to the PS shards.
  rpc::ChannelOptions ps_channel;
  // Points the job's history keeps (job_history.h), and the points of its
  // earlier runs this run continues (a recovered or resumed job's).
  size_t history_points = tunables::kJobHistoryPoints;
  std::vector<proto::HistoryPoint> history;
  // Called (without JobRun's lock) after each periodic checkpoint, e.g. to
  // record the job's progress durably.
  std::function<void()> on_checkpoint;
};

// The cache sizes a job's planner uses, from a pass over its training data.
struct JobCacheSizing {
  std::vector<uint32_t> capacity;  // per table, rows kept between iterations
  std::vector<uint32_t> slots;     // per table, slot array size
  // scheduling.warm_start: per table, the `capacity` most used keys of the
  // training data (one epoch), hottest first; empty otherwise.
  std::vector<std::vector<Key>> warm_keys;
};

// Errors: the data source's.
absl::StatusOr<JobCacheSizing> SizeJobCaches(const proto::JobSpec& spec, uint32_t num_workers);

class JobRun {
 public:
  // `ps` are the live PS shards (by rank = shard index), `workers` the live
  // workers taking part (rank = position). `registry` must outlive the run.
  JobRun(std::string job_id, proto::JobSpec spec, std::vector<NodeInfo> ps,
         std::vector<NodeInfo> workers, const NodeRegistry* registry, JobRunOptions options);

  // Runs the job to its end. OK: succeeded. Cancelled: Cancel() was called.
  // Any other error: the job failed, the message says why.
  absl::Status Run();
  // Waits up to `wait` for Run() to return: its outcome then, nullopt
  // before. Each worker's step stream stays open until then, so the
  // stream's status is the run's outcome (WorkerServiceImpl::WorkerSteps).
  std::optional<absl::Status> AwaitEnd(absl::Duration wait) const;

  // Fails the job with Cancelled(reason); safe from any thread, any time.
  void Cancel(const std::string& reason);
  // Fails the job with `status` (not OK); safe from any thread, any time.
  void Abort(absl::Status status) { Fail(std::move(status)); }

  // Removes the job from the PS shards (after a success, when the next job
  // starts). Call after Run() returned. Waits for an export in progress.
  void EndOnPs();

  // The trained dense parameters from worker rank 0 (UploadDense), before
  // its last report. Run() checks every replica's reported CRC against them.
  // Errors: NotFound (not this job's worker), PermissionDenied (not rank 0),
  // InvalidArgument (empty).
  absl::Status AcceptDense(const std::string& node_id, std::vector<float> values,
                           const DenseUpload& meta = {});
  // Writes the trained model to `out_dir` (model_export.h). Errors:
  // FailedPrecondition once EndOnPs() ran (the tables are gone), the
  // export's.
  absl::StatusOr<proto::ExportJobResponse> Export(const std::string& out_dir);
  // Whether the job's tables were dropped from the PS shards (EndOnPs).
  bool EndedOnPs() const {
    absl::MutexLock lock(&ps_mu_);
    return ended_on_ps_;
  }

  const std::string& job_id() const { return job_id_; }
  // The nodes this run was placed on: PS shards by shard index, workers by
  // rank; node_ids() both.
  std::vector<std::string> ps_node_ids() const;
  std::vector<std::string> worker_node_ids() const;
  std::vector<std::string> node_ids() const;
  // This run of the job (JoinJobResponse.run_id): random, nonzero, new for
  // every JobRun, so a recovery's or a restarted scheduler's run differs
  // from the one before it.
  uint64_t run_id() const { return run_id_; }
  // The key-value scope of this run's rendezvous (JoinJobResponse).
  std::string rendezvous_scope() const;
  bool HasWorker(const std::string& node_id) const;
  // A worker of this job that has not joined it yet.
  bool Joinable(const std::string& node_id) const;

  // The JoinJob answer for a worker of this job. Waits (up to `wait`) until
  // the caches are sized. A worker joins once. Errors: NotFound (not a
  // worker of this job), FailedPrecondition (joined already), Unavailable
  // (not ready yet), the job's failure.
  absl::StatusOr<proto::JoinJobResponse> Join(const std::string& node_id, absl::Duration wait);
  // The worker's step queue. Errors: NotFound.
  absl::StatusOr<StepQueue*> QueueOf(const std::string& node_id);
  // Errors: NotFound (not this job's worker), InvalidArgument (an iteration
  // not sent to it). A report carrying an error fails the job.
  absl::Status Report(const proto::StepReport& report);
  // A worker's predictions for one held-out batch. Errors: NotFound (not
  // this job's worker), FailedPrecondition (no such evaluation running),
  // EvalRound::Accept's.
  absl::Status ReportEval(const proto::EvalReport& report);

  proto::JobProgress Progress() const;
  // Steps waiting in each worker's queue (by rank).
  std::vector<size_t> QueueDepths() const;
  // Each PS shard's counters and memory for this job; empty before the job
  // is installed, after EndOnPs() or when a shard does not answer.
  std::vector<proto::PsStatsResponse> PsStats();
  // Losses of the completed iterations (Σ over workers / global batch).
  std::vector<double> Losses() const;
  // The job's history (job_history.h), oldest first.
  std::vector<proto::HistoryPoint> History() const;

 private:
  // Run() until its outcome is known (Run() records it for AwaitEnd).
  absl::Status RunToEnd();
  absl::Status Prepare();
  absl::Status Plan();
  absl::Status WaitForReports();
  // After flush iteration `iteration` (every dirty row written back): waits
  // for every worker's report of it, checkpoints every shard at it and prunes
  // to checkpoint.keep_last. No step after it is queued meanwhile, so no
  // shard commits past it.
  // A checkpoint the storage refused (RESOURCE_EXHAUSTED: full; PERMISSION_
  // DENIED: read-only or refused) is recorded (progress checkpoint_failures,
  // checkpoint_error), its partial files removed, and training goes on; any
  // other failure (a shard gone) fails the run. `planner_state` is the
  // planner after the iteration's plan (Planner::SaveState), written beside
  // the dense half.
  // `data_cursor` is written beside the checkpoint when there is one.
  absl::Status CheckpointAt(uint64_t iteration, const std::string& planner_state,
                            const absl::StatusOr<std::string>& data_cursor);
  // `stream` (just opened) moved to `resume_at` batches by the resume
  // point's data cursor, or a fresh stream where there is none or it does
  // not fit (then it has read no batch); sets progress' data_resume.
  absl::StatusOr<std::unique_ptr<BatchStream>> RestoreDataCursor(
      std::unique_ptr<BatchStream> stream, uint64_t resume_at);
  // The planner a run resumed from a checkpoint of the same training starts
  // with, loaded from the checkpoint's planner file (mode LOADED); null when
  // it has none or it cannot be used (logged: then it is replayed).
  std::unique_ptr<Planner> LoadPlanner(const PlannerOptions& options, uint64_t resume_at,
                                       proto::PlannerResume* mode);
  static bool RefusedByStorage(const absl::Status& status);
  // What this run's checkpoint manifest at `iteration` records besides the
  // shards' files (job_checkpoint.h).
  checkpoint::ManifestParts ManifestPartsAt(
      uint64_t iteration, const checkpoint::DenseCheckpointFile* dense,
      const checkpoint::PlannerCheckpointFile* planner = nullptr) const;
  // At the job's end: every shard's tables after the last iteration and
  // the final dense parameters (dense.bin), in a manifest marked final.
  // Returns its path.
  absl::StatusOr<std::string> FinalCheckpoint();
  // Removes what was written of the checkpoint of `iteration`.
  void RecordCheckpointFailure(const absl::Status& status, uint64_t iteration);
  // After flush iteration `iteration` (or the last): waits for every
  // worker's report of it, sends each worker its share of the held-out
  // batches, waits for every prediction and records the exact AUC and log
  // loss (progress, history, log). Training waits meanwhile.
  absl::Status EvaluateAt(uint64_t iteration);
  // Waits until every worker reported `iteration` (or the job failed).
  absl::Status WaitForIteration(uint64_t iteration);
  // Reads and encodes the held-out batches (Prepare, when eval_ asks).
  absl::Status LoadHeldOut();
  // Counts a training step, then queues it (Enqueue).
  absl::Status PushStep(uint32_t w, std::shared_ptr<const proto::WorkerStep> step);
  // Pushes to worker w's queue, waking every `poll` to check the job.
  absl::Status Enqueue(uint32_t w, std::shared_ptr<const proto::WorkerStep> step);
  // The failure (cancel, a dead node, an error report), or OK.
  absl::Status Health();
  void Fail(absl::Status status);
  int WorkerIndex(const std::string& node_id) const;
  // Every worker's final CRC equals the uploaded parameters'. Errors:
  // DataLoss naming the worker that differs, Internal when none was uploaded.
  absl::Status CheckDenseReplicas();

  const std::string job_id_;
  const uint64_t run_id_;
  const proto::JobSpec spec_;
  const std::vector<NodeInfo> ps_nodes_;
  const std::vector<NodeInfo> workers_;
  const NodeRegistry* registry_;
  const JobRunOptions options_;
  const EvalSettings eval_;
  // The held-out batches (set by Prepare, then read-only): encoded for the
  // workers, their sizes and labels in order.
  std::vector<proto::EvalBatch> eval_batches_;
  std::vector<uint32_t> eval_batch_sizes_;
  std::vector<float> eval_labels_;
  std::unique_ptr<ps::PsClient> ps_;  // set once by Prepare (under ps_mu_)
  std::vector<std::unique_ptr<StepQueue>> queues_;

  mutable absl::Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> outcome_ ABSL_GUARDED_BY(mu_);  // once Run() returned
  bool sized_ ABSL_GUARDED_BY(mu_) = false;
  JobCacheSizing sizing_ ABSL_GUARDED_BY(mu_);
  uint64_t total_iterations_ ABSL_GUARDED_BY(mu_) = 0;  // 0 until known (epochs)
  uint64_t planned_ ABSL_GUARDED_BY(mu_) = 0;
  bool planning_done_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<uint64_t> next_report_ ABSL_GUARDED_BY(mu_);  // per worker
  std::vector<bool> joined_ ABSL_GUARDED_BY(mu_);           // per worker
  std::vector<uint64_t> sent_ ABSL_GUARDED_BY(mu_);         // steps queued, per worker
  // An iteration planned and not yet reported by every worker: made when
  // it is planned (rows, hits), completed by the reports (loss, phases).
  struct Pending {
    uint32_t reports = 0;
    double loss_sum = 0;
    proto::HistoryPoint point;
  };
  std::map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<double> losses_ ABSL_GUARDED_BY(mu_);
  JobHistory history_ ABSL_GUARDED_BY(mu_);
  absl::Time last_point_time_ ABSL_GUARDED_BY(mu_);
  uint64_t last_point_iteration_ ABSL_GUARDED_BY(mu_) = 0;
  proto::JobProgress progress_ ABSL_GUARDED_BY(mu_);
  absl::Time started_ ABSL_GUARDED_BY(mu_);
  uint64_t rows_vanilla_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t uses_ ABSL_GUARDED_BY(mu_) = 0;  // planned row uses and cache hits
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<float> dense_ ABSL_GUARDED_BY(mu_);  // from rank 0, at the end
  // A resumed job: its first iteration and the dense half it starts from.
  uint64_t first_iteration_ ABSL_GUARDED_BY(mu_) = 0;
  // Resumed from a checkpoint of the same training: Plan replays the
  // planner over the iterations before first_iteration_ (cache_refill.h).
  bool replay_ ABSL_GUARDED_BY(mu_) = false;
  // The checkpoint resumed from (its planner file; the dense half is moved
  // out into initial_dense_*).
  ResumePoint resumed_ ABSL_GUARDED_BY(mu_);
  std::vector<float> initial_dense_ ABSL_GUARDED_BY(mu_);
  std::vector<float> initial_dense_state_ ABSL_GUARDED_BY(mu_);
  // From rank 0 for the checkpoint after an iteration: parameters + state.
  struct CheckpointDense {
    std::vector<float> floats;
    uint64_t state_floats = 0;
  };
  std::map<uint64_t, CheckpointDense> checkpoint_dense_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> final_crc_ ABSL_GUARDED_BY(mu_);        // per worker, last report
  std::unique_ptr<EvalRound> eval_round_ ABSL_GUARDED_BY(mu_);  // the one running

  // Serialises Export and EndOnPs (which drops the tables an export reads).
  mutable absl::Mutex ps_mu_ ABSL_ACQUIRED_AFTER(mu_);
  bool ended_on_ps_ ABSL_GUARDED_BY(ps_mu_) = false;
};

}  // namespace herald::scheduler
