#pragma once
// The herald_worker loop: asks the scheduler for a job that includes this
// worker (JoinJob), builds a WorkerReplica for it (PS client, model, cache,
// Gloo through the scheduler's rendezvous), executes its step stream in
// order and reports every iteration (loss, phase times, bytes) or the error
// that stopped it; then waits for the next job. Between two steps, and
// after the last, the stream may carry held-out batches to score
// (WorkerStep.eval): the evaluations during the job.
//
// Shutdown (Stop, e.g. on SIGTERM): a step being executed finishes; the
// worker then reports the next iteration as abandoned (at once when it was
// waiting for a step), so the scheduler fails the job with that reason and
// frees the PS shards instead of leaving them waiting.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "cluster/node_membership.h"
#include "cluster/scheduler_client.h"
#include "common/rpc/channel.h"
#include "grpcpp/grpcpp.h"
#include "proto/scheduler.grpc.pb.h"
#include "ps_server/client/ps_client.h"
#include "worker/eval/held_out_scorer.h"
#include "worker/runtime/device_factory.h"

namespace herald::worker {

struct WorkerAgentOptions {
  std::string token;                    // cluster token (empty: none)
  std::string gloo_host = "127.0.0.1";  // interface the Gloo rank listens on
  rpc::ChannelOptions ps_channel;       // TLS settings for the PS shards' channels
  // The embedding data path: "ucx", "grpc" or "auto" (UCX where every shard
  // serves it, TLS is off and it connects; else gRPC).
  std::string transport = "auto";
  // Overlap the PS transfers with each other and with compute, and fetch
  // the next step's early rows during the current one (StepExecutor).
  bool overlap = true;
  bool ucx_shared_memory = false;  // PsClientOptions::ucx_shared_memory
  std::string device = "cpu";      // "cpu" or "cuda:N": each job's replica runs there
  DeviceOptions device_options;
};

class WorkerAgent {
 public:
  // `membership` (not owned) registers this worker and gives its node id;
  // `scheduler` (not owned) is its client of the scheduler's WorkerService.
  WorkerAgent(cluster::NodeMembership* membership, cluster::SchedulerClient* scheduler,
              WorkerAgentOptions options);

  // Runs jobs until Stop(). Returns OK after a clean stop.
  absl::Status Run();
  // Thread-safe; returns at once (Run returns once the current step ends).
  void Stop();

  int jobs_finished() const;

 private:
  // One job from JoinJob to its last step (or failure). Errors are the
  // job's; they are reported to the scheduler and logged.
  absl::Status RunJob(const proto::JoinJobResponse& join, const std::string& node_id);
  // Scores a held-out batch (step.eval) and sends the predictions
  // (ReportEval) for run `run_id`. Errors: the scorer's, the report's.
  absl::Status Evaluate(HeldOutScorer& scorer, const proto::WorkerStep& step,
                        const std::string& node_id, uint64_t run_id);
  // The job's PS client over the chosen data path (options_.transport);
  // *over_ucx tells which.
  absl::StatusOr<std::unique_ptr<ps::PsClient>> ConnectPs(
      const proto::JoinJobResponse& join, const std::vector<std::string>& ps_addresses,
      bool* over_ucx);
  // Tells the scheduler that this worker's run `run_id` of the job failed.
  void ReportError(const std::string& node_id, const std::string& job_id, uint64_t run_id,
                   uint64_t iteration, const std::string& error);
  bool stopping() const;
  // Reports `iteration` abandoned (once per job) and cancels the stream.
  void Abandon(uint64_t iteration);
  // Waits up to `d` unless stopping. True if stopping.
  bool PauseOrStop(absl::Duration d);

  cluster::NodeMembership* membership_;
  cluster::SchedulerClient* scheduler_;
  const WorkerAgentOptions options_;
  std::shared_ptr<proto::Coordinator::Stub> coordinator_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The job being run: its stream, whether a step is executing, whether
  // the abandonment was reported.
  cluster::StepReader* stream_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::string node_id_ ABSL_GUARDED_BY(mu_);
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  uint64_t run_id_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_iteration_ ABSL_GUARDED_BY(mu_) = 0;
  bool executing_ ABSL_GUARDED_BY(mu_) = false;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  int jobs_finished_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace herald::worker
