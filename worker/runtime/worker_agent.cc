#include "worker/runtime/worker_agent.h"

#include <utility>

#include "common/logging.h"
#include "worker/collectives/coordinator_kv_store.h"

namespace herald::worker {

WorkerAgent::WorkerAgent(cluster::NodeMembership* membership, cluster::SchedulerClient* scheduler,
                         WorkerAgentOptions options)
    : membership_(membership),
      scheduler_(scheduler),
      options_(std::move(options)),
      coordinator_(proto::Coordinator::NewStub(membership->channel())) {}

void WorkerAgent::Stop() {
  // Under the lock: the session cannot end (and be destroyed) meanwhile.
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  if (session_ != nullptr) session_->Stop();
}

int WorkerAgent::jobs_finished() const {
  absl::MutexLock lock(&mu_);
  return jobs_finished_;
}

bool WorkerAgent::PauseOrStop(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  auto stop = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
  return mu_.AwaitWithTimeout(absl::Condition(&stop), d);
}

JobSessionConnectors WorkerAgent::Connectors() const {
  JobSessionConnectors connectors;
  connectors.connect_ps = [this](const proto::JoinJobResponse& join) {
    return ConnectJobPs(join, options_);
  };
  connectors.rendezvous = [this](const proto::JoinJobResponse& join) -> std::unique_ptr<KvStore> {
    return std::make_unique<CoordinatorKvStore>(coordinator_, join.rendezvous_scope(),
                                                options_.token);
  };
  return connectors;
}

absl::Status WorkerAgent::Run() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    absl::StatusOr<proto::RegisterResponse> reg = membership_->WaitRegistered(absl::Seconds(1));
    if (!reg.ok()) continue;
    const std::string node_id = membership_->node_id();
    proto::JoinJobRequest request;
    request.set_node_id(node_id);
    request.set_address(membership_->address());
    absl::StatusOr<proto::JoinJobResponse> joined = scheduler_->JoinJob(request);
    if (absl::IsNotFound(joined.status())) continue;  // no job for us yet (the server waited)
    // Any other error, a stale node id included (FailedPrecondition: the
    // membership registers again once a heartbeat says the id is gone), is
    // logged and asked again after a pause.
    if (!joined.ok()) {
      HLOG_WARN("JoinJob: {}", joined.status().ToString());
      PauseOrStop(absl::Seconds(1));
      continue;
    }
    const std::string job_id = joined->job_id();
    HLOG_INFO("joined {} as rank {} of {}", job_id, joined->rank(), joined->num_workers());
    JobSession session(*std::move(joined), node_id, scheduler_, options_, Connectors());
    {
      absl::MutexLock lock(&mu_);
      session_ = &session;
      if (stopping_) session.Stop();  // Stop() came before the session
    }
    const absl::Status outcome = session.Run();
    if (outcome.ok()) {
      HLOG_INFO("job {}: every step done", job_id);
    } else {
      HLOG_WARN("job {} stopped: {}", job_id, outcome.ToString());
    }
    absl::MutexLock lock(&mu_);
    session_ = nullptr;
    ++jobs_finished_;
  }
  return absl::OkStatus();
}

}  // namespace herald::worker
