#pragma once
// The herald_worker loop, this worker's connection to the scheduler: waits
// until registered, asks for a job that includes this worker (JoinJob),
// runs it as a JobSession (job_session.h) and then waits for the next job.
//
// Shutdown (Stop, e.g. on SIGTERM): the running session stops (its step
// finishes, the next iteration is reported abandoned) and Run returns.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "cluster/node_membership.h"
#include "cluster/scheduler_client.h"
#include "proto/scheduler.grpc.pb.h"
#include "worker/runtime/job_session.h"
#include "worker/runtime/worker_options.h"

namespace herald::worker {

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
  // Waits up to `d` unless stopping. True if stopping.
  bool PauseOrStop(absl::Duration d);
  // The session's connectors: ConnectJobPs and the scheduler's rendezvous.
  JobSessionConnectors Connectors() const;

  cluster::NodeMembership* membership_;
  cluster::SchedulerClient* scheduler_;
  const WorkerAgentOptions options_;
  std::shared_ptr<proto::Coordinator::Stub> coordinator_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  JobSession* session_ ABSL_GUARDED_BY(mu_) = nullptr;  // the job running
  int jobs_finished_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace herald::worker
