#pragma once
// One running job: sizes the caches from the data, installs the job on the
// PS shards, plans every global batch (read ahead by the data loader) and
// feeds each worker's bounded step queue, then follows the workers' reports
// until every worker has reported the last iteration. Evaluates the model on
// the held-out samples as eval.* asks (EvaluateAt). Fails the job (with
// the reason) on a planning or data error, a worker error report, a worker
// or PS shard that stops heartbeating, or Cancel().
//
// Its parts, each testable alone: job_cache_sizing (cache sizes from the
// data), job_resume (continuing from a checkpoint), job_progress (counters,
// history, ETA), eval_coordinator (evaluations), job_checkpointer
// (checkpoint files). JobRun sequences them and owns the threads' waits.
//
// Thread model: Run() on the job manager's thread; Join/Queue/Report/
// Progress from RPC threads.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/rpc/channel.h"
#include "common/tunables.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "ps_server/client/ps_client.h"
#include "ps_server/client/sharded_ps_client.h"
#include "scheduler/data/held_out.h"
#include "scheduler/data/read_ahead.h"
#include "scheduler/jobs/eval_coordinator.h"
#include "scheduler/jobs/job_cache_sizing.h"
#include "scheduler/jobs/job_checkpointer.h"
#include "scheduler/jobs/job_progress.h"
#include "scheduler/jobs/ps_look_ahead.h"
#include "scheduler/jobs/resume_point.h"
#include "scheduler/jobs/sizing_store.h"
#include "scheduler/jobs/step_pipeline.h"
#include "scheduler/jobs/step_queue.h"
#include "scheduler/membership/node_registry.h"

namespace herald::scheduler {

// What an UploadDense stream carried besides the floats (DenseChunk).
struct DenseUpload {
  bool checkpoint = false;  // for the checkpoint after `iteration`
  uint64_t iteration = 0;
  uint64_t state_floats = 0;  // trailing floats of dense optimizer state
  uint64_t run_id = 0;        // the uploading worker's run (JoinJobResponse)
};

struct JobRunOptions {
  size_t step_queue_capacity = tunables::kStepQueueCapacity;  // steps per worker (back-pressure)
  // PlannerOptions::threads; 0: one per core (at most 64).
  uint32_t planner_threads = tunables::kPlannerThreads;
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
  // Where cache sizings are kept for later jobs over the same data
  // (sizing_store.h; the scheduler's --state_dir/sizing). Empty: none kept.
  std::string sizing_dir;
  // Makes the run's client of its PS shards (their addresses by shard
  // index). Unset: ps::MakeGrpcPsClient. Tests pass an in-process cluster's.
  std::function<absl::StatusOr<std::unique_ptr<ps::PsClient>>(const std::vector<std::string>&,
                                                              const ps::PsClientOptions&)>
      make_ps_client;
};

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
  absl::StatusOr<proto::ExportJobResponse> Export(const std::string& out_dir,
                                                  const std::string& since = "");
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
  // Sizes the caches, reads the held-out batches, installs the job on the
  // PS shards (restored from checkpoint.resume_from if set).
  absl::Status Prepare();
  // The caches' sizes: a pass over the data, or where the run continues
  // the same training as `resume`'s (`replay`), the sizes kept beside that
  // checkpoint (*loaded then true; a missing or damaged file is logged and
  // the data read).
  absl::StatusOr<JobCacheSizing> SizeCaches(const ResumePoint& resume, bool replay, bool* loaded);
  // A fresh sizing: an earlier job's of the same pass (options_.sizing_dir),
  // else a pass over the data, then saved there for later jobs.
  absl::StatusOr<JobCacheSizing> SizeFromStoreOrData(uint32_t num_workers, bool* loaded);
  // Plans every iteration and queues its steps, checkpointing and
  // evaluating where the spec asks; the steps are built and queued on a
  // StepPipeline while the next iteration is planned.
  absl::Status Plan();
  // Plan's loop: each iteration's plan and batch go to `steps`.
  absl::Status PlanInto(StepPipeline& steps);
  // Plan's steps. The planner's options for the caches `sizing` (a resume
  // that is not the same training fetches every row and warms nothing).
  absl::StatusOr<PlannerOptions> PlannerOptionsFor(const JobCacheSizing& sizing, bool replay) const;
  struct StartedPlanner {
    std::unique_ptr<Planner> planner;
    bool continued = false;  // loaded from the checkpoint, not replayed to it
  };
  // The planner at the run's first iteration: loaded from the checkpoint
  // (`replay`: the same training), else created, at 0 to be replayed
  // (`replay`) or at `resume_at`; records how in the progress.
  absl::StatusOr<StartedPlanner> StartPlanner(PlannerOptions po, bool replay, uint64_t resume_at,
                                              const ResumePoint& resumed);
  // The training batches from the run's place: *skip_batches skipped (the
  // checkpoint's data cursor moves there instead where it can, and then
  // sets it to 0), each checkpoint iteration's cursor kept.
  absl::StatusOr<std::unique_ptr<ReadAhead>> OpenTrainingData(const ResumePoint& resumed,
                                                              uint64_t* skip_batches);
  // Builds, encodes and queues every worker's step of `plan` for `batch`
  // (`last`: the job's last iteration), with its history point first.
  absl::Status QueueIteration(const IterationPlan& plan, const data::KeyBatch& batch, bool last,
                              double plan_ms, uint64_t malformed_lines);
  // After a queued iteration that is not the last: the checkpoint and the
  // evaluation the spec asks for after it.
  absl::Status AfterQueued(const Planner& planner, uint64_t iteration, ReadAhead& loader);
  // checkpoint.every_iterations with checkpoint.dir (else 0); eval every
  // (0 without held-out data); the loader's window of batches.
  uint64_t CheckpointEvery() const {
    return spec_.checkpoint().dir().empty() ? 0 : spec_.checkpoint().every_iterations();
  }
  uint64_t EvalEvery() const { return eval_.empty() ? 0 : eval_settings_.every_iterations; }
  uint32_t ReadAheadWindow() const {
    return spec_.data().read_ahead_batches() > 0
               ? spec_.data().read_ahead_batches()
               : static_cast<uint32_t>(tunables::kReadAheadBatches);
  }
  absl::Status WaitForReports();
  // After flush iteration `iteration` (every dirty row written back): waits
  // for every worker's report of it, then writes the checkpoint
  // (JobCheckpointer::WritePeriodic with `planner_state` and `data_cursor`).
  // No step after it is queued meanwhile, so no shard commits past it. A
  // checkpoint the storage refused is recorded (RecordCheckpointFailure)
  // and training goes on; any other failure (a shard gone) fails the run.
  absl::Status CheckpointAt(uint64_t iteration, const std::string& planner_state,
                            const absl::StatusOr<std::string>& data_cursor);
  // At the job's end, with checkpoint.dir: the final checkpoint. A storage
  // refusal is recorded (the model stays exportable); other errors fail.
  absl::Status FinalCheckpoint();
  // Records a refused checkpoint of `iteration` (progress
  // checkpoint_failures, checkpoint_error) and removes its partial files.
  void RecordCheckpointFailure(const absl::Status& status, uint64_t iteration);
  // After flush iteration `iteration` (or the last): waits for every
  // worker's report of it, sends each worker its share of the held-out
  // batches, waits for every prediction and records the exact AUC and log
  // loss (progress, history, log). Training waits meanwhile.
  // `set`: other samples than the held-out ones (null: those), the
  // `files` they are of (recorded with the figures).
  absl::Status EvaluateAt(uint64_t iteration, std::shared_ptr<const EvalSet> set = nullptr,
                          const std::vector<std::string>& files = {});
  // eval.each_file: the same for the new files `files` of the followed
  // directory (by name), before any of their samples trains. A file
  // without a sample, or removed since the stream opened it, is logged and
  // skipped. Errors: EvaluateAt's, the files' readers' (naming
  // eval.each_file).
  absl::Status ScoreFiles(uint64_t iteration, const std::vector<std::string>& files);
  // Waits until every worker reported `iteration` (or the job failed).
  absl::Status WaitForIteration(uint64_t iteration);
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
  const EvalSettings eval_settings_;
  // Its held-out batches are loaded by Prepare, before any worker can join.
  EvalCoordinator eval_;
  // The training stream's id admission (null: none); the planning thread's.
  std::shared_ptr<const KeyLifecycle> admission_;
  // With checkpoint.dir; null without.
  std::unique_ptr<JobCheckpointer> checkpointer_;
  std::unique_ptr<ps::PsClient> ps_;  // set once by Prepare (under ps_mu_)
  // Set by Prepare where the shards have a disk tier; used by Plan alone.
  std::unique_ptr<PsLookAhead> look_ahead_;
  std::vector<std::unique_ptr<StepQueue>> queues_;

  mutable absl::Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  // The training stream's stop flag (BatchStream::stop_token): a failure
  // or cancel sets it, so a stream waiting for the next file of a followed
  // directory (data.follow) gives up at once.
  std::shared_ptr<std::atomic<bool>> data_stop_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> outcome_ ABSL_GUARDED_BY(mu_);  // once Run() returned
  bool sized_ ABSL_GUARDED_BY(mu_) = false;
  JobCacheSizing sizing_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> joined_ ABSL_GUARDED_BY(mu_);  // per worker
  JobProgressTracker tracker_ ABSL_GUARDED_BY(mu_);
  std::vector<float> dense_ ABSL_GUARDED_BY(mu_);  // from rank 0, at the end
  // Resumed from a checkpoint of the same training: Plan replays the
  // planner over the iterations before the first (cache_refill.h).
  bool replay_ ABSL_GUARDED_BY(mu_) = false;
  // The checkpoint resumed from (its planner file; the dense half is moved
  // out into initial_dense_*).
  ResumePoint resumed_ ABSL_GUARDED_BY(mu_);
  std::vector<float> initial_dense_ ABSL_GUARDED_BY(mu_);
  std::vector<float> initial_dense_state_ ABSL_GUARDED_BY(mu_);

  // Serialises Export and EndOnPs (which drops the tables an export reads).
  mutable absl::Mutex ps_mu_ ABSL_ACQUIRED_AFTER(mu_);
  bool ended_on_ps_ ABSL_GUARDED_BY(ps_mu_) = false;
};

}  // namespace herald::scheduler
