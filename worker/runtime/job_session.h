#pragma once
// One job on this worker, from the JoinJob answer to its end: builds the
// WorkerReplica (PS client, model, cache, collectives through the job's
// rendezvous), executes the step stream in order and reports every
// iteration (loss, phase times, bytes) or the error that stopped it. Between
// two steps, and after the last, the stream may carry held-out batches to
// score (WorkerStep.eval). Rank 0 uploads the dense half for each checkpoint
// and the trained parameters before its last report.
//
// Stop() (from another thread, e.g. on SIGTERM): a step being executed
// finishes; the session then reports the next iteration as abandoned (at
// once when it was waiting for a step), so the scheduler fails the job with
// that reason and frees the PS shards instead of leaving them waiting.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "cluster/scheduler_client.h"
#include "proto/scheduler.pb.h"
#include "worker/collectives/kv_store.h"
#include "worker/eval/held_out_scorer.h"
#include "worker/runtime/ps_data_path.h"
#include "worker/runtime/step_reporter.h"
#include "worker/runtime/worker_options.h"

namespace herald::worker {

// How a session reaches what lies outside the scheduler's stream; the
// worker's defaults are ConnectJobPs and the scheduler's rendezvous, tests
// pass in-process ones.
struct JobSessionConnectors {
  std::function<absl::StatusOr<JobPsClient>(const proto::JoinJobResponse&)> connect_ps;
  // The store the job's ranks meet through (scoped to the run).
  std::function<std::unique_ptr<KvStore>(const proto::JoinJobResponse&)> rendezvous;
};

class JobSession {
 public:
  // `scheduler` (not owned) must outlive the session.
  JobSession(proto::JoinJobResponse join, std::string node_id, cluster::SchedulerClient* scheduler,
             const WorkerAgentOptions& options, JobSessionConnectors connectors);

  // Runs the job to its end. OK: every step done (the stream ended after
  // the last). Errors: the job's (reported to the scheduler unless the
  // scheduler ended the stream), Cancelled after Stop().
  absl::Status Run();
  // Thread-safe; returns at once.
  void Stop();

 private:
  // Scores a held-out batch (step.eval) and sends the predictions.
  // Errors: the scorer's, the report's.
  absl::Status Evaluate(HeldOutScorer& scorer, const proto::WorkerStep& step);
  // Tells the scheduler that this run of the job failed at `iteration`,
  // after the steps before were reported (StepReporter::Flush).
  void ReportError(uint64_t iteration, const std::string& error);
  // The same without waiting for the steps before (from the reporter).
  void SendError(uint64_t iteration, const std::string& error);
  // Reports `iteration` abandoned (once) and cancels the stream.
  void Abandon(uint64_t iteration);
  bool stopping() const;

  const proto::JoinJobResponse join_;
  const std::string node_id_;
  cluster::SchedulerClient* const scheduler_;
  const WorkerAgentOptions& options_;
  const JobSessionConnectors connectors_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The open stream, whether a step is executing, whether the abandonment
  // was reported.
  cluster::StepReader* stream_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t next_iteration_ ABSL_GUARDED_BY(mu_) = 0;
  bool executing_ ABSL_GUARDED_BY(mu_) = false;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  // The running session's reporter (null outside Run's steps).
  StepReporter* reporter_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace herald::worker
