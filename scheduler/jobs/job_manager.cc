#include "scheduler/jobs/job_manager.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checkpoint/manifest.h"
#include "common/logging.h"
#include "common/model_consistency.h"
#include "common/scheduling_defaults.h"
#include "common/status.h"
#include "common/thread_name.h"
#include "scheduler/data/data_schema_spec.h"
#include "scheduler/jobs/job_spec_check.h"
#include "scheduler/jobs/model_export.h"

namespace herald::scheduler {
namespace {

// Iterations `progress` reached past the checkpoint `manifest`: those a
// run resumed from it trains again.
uint64_t IterationsAfter(const std::string& manifest, const proto::JobProgress& progress) {
  absl::StatusOr<proto::CheckpointManifest> m = checkpoint::ReadManifest(manifest);
  if (!m.ok() || progress.iteration() <= m->iteration() + 1) return 0;
  return progress.iteration() - (m->iteration() + 1);
}

}  // namespace

JobManager::JobManager(NodeRegistry* registry, KvRendezvous* rendezvous, JobManagerOptions options)
    : registry_(registry), rendezvous_(rendezvous), options_(std::move(options)) {
  {
    absl::MutexLock lock(&mu_);
    Restore(options_.restored);
  }
  thread_ = std::thread([this] {
    NameThisThread("job-manager");
    Loop();
  });
}

absl::Status JobManager::Record(const Job& job) {
  if (options_.store == nullptr) return absl::OkStatus();
  StoredJob stored;
  stored.id = job.id;
  stored.number = job.number;
  stored.spec = job.spec;
  stored.state = job.state;
  stored.reason = job.reason;
  stored.progress = job.run ? job.run->Progress() : job.final_progress;
  stored.history = job.run ? job.run->History() : job.history;
  stored.submitted_unix_ms = job.submitted_ms;
  stored.finished_unix_ms = job.finished_ms;
  absl::Status s = options_.store->Put(stored);
  if (!s.ok()) HLOG_ERROR("job {}: not recorded: {}", job.id, std::string(s.message()));
  return s;
}

void JobManager::Restore(std::vector<StoredJob> stored) {
  for (StoredJob& j : stored) {
    auto job = std::make_unique<Job>();
    job->id = j.id;
    job->number = j.number;
    job->spec = std::move(j.spec);
    job->state = j.state;
    job->reason = std::move(j.reason);
    job->final_progress = std::move(j.progress);
    job->history = std::move(j.history);
    job->submitted_ms = j.submitted_unix_ms;
    job->finished_ms = j.finished_unix_ms;
    job->last_checkpoint = job->final_progress.last_checkpoint();
    const proto::RecoverySpec& recovery = job->spec.recovery();
    const bool recoverable = recovery.has_max_attempts() ? recovery.max_attempts() > 0 : true;
    if (job->state == proto::JOB_RUNNING && recoverable && !job->last_checkpoint.empty()) {
      // Queued again, to resume from its newest periodic checkpoint once the
      // nodes have registered with this scheduler.
      job->state = proto::JOB_QUEUED;
      job->spec.mutable_checkpoint()->set_resume_from(
          absl::StrCat(job->spec.checkpoint().dir(), "/", job->id));
      job->recoveries = 1;
      job->iterations_retrained = IterationsAfter(job->last_checkpoint, job->final_progress);
      job->recovery_causes.push_back(
          absl::StrCat("the scheduler restarted while the job ran (recorded at iteration ",
                       job->final_progress.iteration(), ")"));
      Record(*job).IgnoreError();
    } else if (job->state == proto::JOB_RUNNING) {
      job->state = proto::JOB_FAILED;
      // Its progress as recorded at its start or its last checkpoint.
      job->reason = absl::StrCat(
          "the scheduler restarted while the job ran (recorded at iteration ",
          job->final_progress.iteration(),
          "); it has no periodic checkpoint to resume from (checkpoint.every_iterations)");
      job->finished_ms = absl::ToUnixMillis(absl::Now());
      Record(*job).IgnoreError();
    }
    if (job->state == proto::JOB_QUEUED) queue_.push_back(job->id);
    HLOG_INFO("job {} ({}) restored: {}", job->id, job->spec.name(),
              proto::JobState_Name(job->state));
    next_id_ = std::max(next_id_, job->number + 1);
    order_.push_back(job->id);
    jobs_[job->id] = std::move(job);
  }
}

JobManager::~JobManager() {
  Stop();
  thread_.join();
}

void JobManager::Stop() {
  std::shared_ptr<JobRun> running;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    ++version_;  // wakes WaitForUpdate
    running = running_;
  }
  if (running) running->Cancel("the scheduler is shutting down");
}

bool JobManager::IsTerminal(proto::JobState state) {
  return state == proto::JOB_SUCCEEDED || state == proto::JOB_FAILED ||
         state == proto::JOB_CANCELLED;
}

absl::StatusOr<std::string> JobManager::Submit(const proto::JobSpec& submitted) {
  // The job runs, reports and hands its workers the spec with every default
  // filled in, so everyone reads the same options.
  proto::JobSpec spec = submitted;
  ResolveSchedulingDefaults(spec.mutable_scheduling());
  if (absl::Status s = ResolveDataSchema(&spec); !s.ok()) return s;
  if (absl::Status s = ValidateJobSpec(spec); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  auto job = std::make_unique<Job>();
  job->number = next_id_;
  job->id = absl::StrCat("job-", job->number);
  job->spec = spec;
  job->submitted_ms = absl::ToUnixMillis(absl::Now());
  if (absl::Status s = Record(*job); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("the job could not be recorded: ", s.message()));
  }
  ++next_id_;
  const std::string id = job->id;
  HLOG_INFO("job {} ({}) queued", id, spec.name());
  jobs_[id] = std::move(job);
  order_.push_back(id);
  queue_.push_back(id);
  ++version_;
  return id;
}

proto::JobStatus JobManager::StatusLocked(const Job& job, JobStatusDetail detail) const {
  proto::JobStatus s;
  s.set_job_id(job.id);
  s.set_name(job.spec.name());
  s.set_state(job.state);
  s.set_reason(job.reason);
  s.set_submitted_unix_ms(job.submitted_ms);
  s.set_finished_unix_ms(job.finished_ms);
  *s.mutable_progress() =
      job.run && job.state == proto::JOB_RUNNING ? job.run->Progress() : job.final_progress;
  if (detail.losses && job.run) {
    for (double loss : job.run->Losses()) s.add_losses(loss);
  }
  if (detail.history) {
    const std::vector<proto::HistoryPoint> history =
        job.run && job.state == proto::JOB_RUNNING ? job.run->History() : job.history;
    for (const proto::HistoryPoint& p : history) *s.add_history() = p;
  }
  if (detail.spec) *s.mutable_spec() = job.spec;
  if (job.run && job.state == proto::JOB_RUNNING) {
    for (const std::string& id : job.run->ps_node_ids()) s.add_ps_nodes(id);
    for (const std::string& id : job.run->worker_node_ids()) s.add_worker_nodes(id);
  }
  s.set_recoveries(job.recoveries);
  s.set_iterations_retrained(job.iterations_retrained);
  s.set_model_consistency(ModelConsistency(job.spec.scheduling()));
  for (const std::string& cause : job.recovery_causes) s.add_recovery_causes(cause);
  return s;
}

absl::StatusOr<std::vector<proto::JobStatus>> JobManager::Status(const std::string& job_id,
                                                                 JobStatusDetail detail) const {
  absl::MutexLock lock(&mu_);
  std::vector<proto::JobStatus> out;
  if (!job_id.empty()) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
    out.push_back(StatusLocked(*it->second, detail));
    return out;
  }
  for (const auto& id : order_) out.push_back(StatusLocked(*jobs_.at(id), detail));
  return out;
}

absl::Status JobManager::Cancel(const std::string& job_id) {
  std::shared_ptr<JobRun> run;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
    Job& job = *it->second;
    if (IsTerminal(job.state)) {
      return absl::FailedPreconditionError(
          absl::StrCat("job ", job_id, " already ended (", proto::JobState_Name(job.state), ")"));
    }
    if (job.state == proto::JOB_QUEUED) {
      queue_.erase(std::remove(queue_.begin(), queue_.end(), job_id), queue_.end());
      Finish(&job, absl::CancelledError("cancelled while queued"));
      return absl::OkStatus();
    }
    run = job.run;
    job.cancel_requested = true;
  }
  run->Cancel("cancelled by the user");
  return absl::OkStatus();
}

absl::StatusOr<proto::JobStatus> JobManager::WaitForUpdate(const std::string& job_id,
                                                           uint64_t* version, absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  const uint64_t seen = *version;
  auto changed = [this, seen]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return version_ != seen; };
  mu_.AwaitWithTimeout(absl::Condition(&changed), wait);
  if (stopping_) return absl::UnavailableError("the scheduler is shutting down");
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
  *version = version_;
  return StatusLocked(*it->second);
}

void JobManager::Finish(Job* job, const absl::Status& outcome) {
  job->state = outcome.ok()                 ? proto::JOB_SUCCEEDED
               : absl::IsCancelled(outcome) ? proto::JOB_CANCELLED
                                            : proto::JOB_FAILED;
  job->reason = std::string(outcome.message());
  job->finished_ms = absl::ToUnixMillis(absl::Now());
  if (job->run) {
    job->final_progress = job->run->Progress();
    job->history = job->run->History();
  }
  Record(*job).IgnoreError();
  ++version_;
  HLOG_INFO("job {} {}{}{}", job->id, proto::JobState_Name(job->state),
            job->reason.empty() ? "" : ": ", job->reason);
}

bool JobManager::PickNodes(const proto::JobSpec& spec, std::vector<NodeInfo>* ps,
                           std::vector<NodeInfo>* workers) const {
  auto stale = [this](const NodeInfo& n) ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = suspects_.find(n.node_id);
    return it != suspects_.end() && n.heartbeats < it->second.heartbeats + 2;
  };
  *ps = registry_->Alive(proto::NODE_ROLE_PS);
  if (ps->empty()) return false;
  for (size_t i = 0; i < ps->size(); ++i) {
    if ((*ps)[i].rank != i || stale((*ps)[i])) return false;  // a shard is missing
  }
  *workers = registry_->Alive(proto::NODE_ROLE_WORKER);
  workers->erase(std::remove_if(workers->begin(), workers->end(), stale), workers->end());
  const size_t want =
      spec.num_workers() > 0 ? spec.num_workers() : std::max<size_t>(1, workers->size());
  if (workers->size() < want) return false;
  workers->resize(want);
  return true;
}

void JobManager::Loop() {
  for (;;) {
    Job* job = nullptr;
    std::vector<NodeInfo> ps, workers;
    std::shared_ptr<JobRun> previous;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ ||
               (!queue_.empty() && PickNodes(jobs_.at(queue_.front())->spec, &ps, &workers));
      };
      if (!mu_.AwaitWithTimeout(absl::Condition(&ready), options_.poll)) continue;
      if (stopping_) return;
      job = jobs_.at(queue_.front()).get();
      queue_.pop_front();
      job->run_options = options_.run;
      job->run_options.history = job->history;        // a restored job's, recorded before
      job->run_options.on_checkpoint = [this, job] {  // the store then knows the last checkpoint
        absl::MutexLock lock(&mu_);
        job->last_checkpoint = job->run->Progress().last_checkpoint();
        Record(*job).IgnoreError();
      };
      job->run =
          std::make_shared<JobRun>(job->id, job->spec, ps, workers, registry_, job->run_options);
      job->state = proto::JOB_RUNNING;
      Record(*job).IgnoreError();
      running_ = job->run;
      previous = std::move(kept_on_ps_);
      ++version_;
      HLOG_INFO("job {} running on {} PS shard(s) and {} worker(s)", job->id, ps.size(),
                workers.size());
    }
    if (previous) previous->EndOnPs();
    absl::Status outcome = job->run->Run();
    rendezvous_->DropScope(job->run->rendezvous_scope());
    while (!outcome.ok()) {
      absl::StatusOr<std::shared_ptr<JobRun>> resumed = Recover(job, outcome);
      if (!resumed.ok()) {
        outcome = resumed.status();
        break;
      }
      outcome = (*resumed)->Run();
      rendezvous_->DropScope((*resumed)->rendezvous_scope());
    }
    absl::MutexLock lock(&mu_);
    running_.reset();
    if (stopping_ && !outcome.ok() && options_.store != nullptr && !job->cancel_requested) {
      // Stopped by the scheduler's shutdown: left as the store recorded it
      // (running, with its newest periodic checkpoint), so a scheduler
      // restarted on the same state resumes it, as after a crash.
      HLOG_INFO("job {} left running in the job store: the scheduler is shutting down ({})",
                job->id, std::string(outcome.message()));
      return;
    }
    Finish(job, outcome);
    if (outcome.ok()) kept_on_ps_ = job->run;
  }
}

absl::StatusOr<std::shared_ptr<JobRun>> JobManager::Recover(Job* job, const absl::Status& failure) {
  absl::MutexLock lock(&mu_);
  auto give_up = [&](const std::string& why) {
    std::string message(failure.message());
    if (!why.empty()) absl::StrAppend(&message, " (", why, ")");
    if (!job->recovery_causes.empty()) {
      absl::StrAppend(&message, "; recovered ", job->recoveries,
                      " time(s) before, from: ", absl::StrJoin(job->recovery_causes, "; "));
    }
    return absl::Status(failure.code(), message);
  };
  if (absl::IsCancelled(failure) || stopping_) return give_up("");
  // The failed run's nodes are suspects until they heartbeat twice more:
  // one that died is placed neither by a recovery nor by the next job,
  // though the liveness timeout has not declared it dead yet.
  const absl::Time failed_at = absl::Now();
  absl::erase_if(suspects_, [&](const auto& entry) {  // dead, or heard from since
    return entry.second.since < failed_at - registry_->liveness_timeout();
  });
  for (const std::string& id : job->run->node_ids()) {
    absl::StatusOr<NodeInfo> node = registry_->Get(id);
    if (node.ok()) suspects_[id] = Suspect{node->heartbeats, failed_at};
  }
  const proto::RecoverySpec& r = job->spec.recovery();
  const uint32_t attempts = r.has_max_attempts() ? r.max_attempts() : 3;
  if (attempts == 0) return give_up("");
  if (job->last_checkpoint.empty()) return give_up("no periodic checkpoint to recover from");
  if (job->recoveries >= attempts) {
    return give_up(absl::StrCat("recovery attempts used up: ", attempts));
  }
  // The job goes on as soon as enough nodes are live and not suspect (about
  // one heartbeat interval when the survivors or spares suffice). Restarted
  // nodes register again; spares count at once.
  const absl::Time deadline = failed_at + registry_->liveness_timeout() +
                              absl::Seconds(r.timeout_s() > 0 ? r.timeout_s() : 60);
  std::vector<NodeInfo> ps, workers;
  auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return stopping_ || PickNodes(job->spec, &ps, &workers);
  };
  while (!ready()) {
    if (absl::Now() >= deadline) {
      return give_up(absl::StrCat("not enough live nodes within ",
                                  r.timeout_s() > 0 ? r.timeout_s() : 60, " s to recover"));
    }
    mu_.AwaitWithTimeout(absl::Condition(&ready), options_.poll);
  }
  if (stopping_) return give_up("the scheduler is stopping");
  job->recovery_causes.push_back(std::string(failure.message()));
  ++job->recoveries;
  job->iterations_retrained += IterationsAfter(job->last_checkpoint, job->run->Progress());
  proto::JobSpec spec = job->spec;
  // The job's checkpoint directory: its newest intact periodic checkpoint
  // (a damaged one is skipped for the one before it).
  spec.mutable_checkpoint()->set_resume_from(
      absl::StrCat(job->spec.checkpoint().dir(), "/", job->id));
  job->history = job->run->History();
  job->run_options.history = job->history;  // the new run continues it
  job->run = std::make_shared<JobRun>(job->id, spec, ps, workers, registry_, job->run_options);
  running_ = job->run;
  ++version_;
  HLOG_WARN("job {}: recovering ({} of {}) from {} on {} PS shard(s) and {} worker(s) after: {}",
            job->id, job->recoveries, attempts, job->last_checkpoint, ps.size(), workers.size(),
            std::string(failure.message()));
  return job->run;
}

absl::StatusOr<proto::JoinJobResponse> JobManager::Join(const std::string& node_id,
                                                        const std::string& address,
                                                        absl::Duration wait) {
  std::shared_ptr<JobRun> run;
  {
    absl::MutexLock lock(&mu_);
    auto has_job = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return stopping_ || (running_ && running_->Joinable(node_id));
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&has_job), wait) || stopping_) {
      return absl::NotFoundError(absl::StrCat("no running job includes ", node_id));
    }
    run = running_;
  }
  // Node ids start again with a restarted scheduler: a worker still asking
  // under the id it had before must not take the place of the node that
  // holds that id now.
  absl::StatusOr<NodeInfo> node = registry_->Get(node_id);
  if (!node.ok() || node->registration.address() != address) {
    return absl::FailedPreconditionError(
        absl::StrCat(node_id, " is not registered at ", address,
                     ": a node id from before a scheduler restart; register again"));
  }
  return run->Join(node_id, wait);
}

absl::StatusOr<std::shared_ptr<JobRun>> JobManager::RunOfWorker(const std::string& node_id) const {
  absl::MutexLock lock(&mu_);
  if (running_ && running_->HasWorker(node_id)) return running_;
  return absl::NotFoundError(absl::StrCat("no running job includes ", node_id));
}

absl::StatusOr<std::shared_ptr<JobRun>> JobManager::CurrentRun(const std::string& job_id,
                                                               uint64_t run_id) const {
  absl::MutexLock lock(&mu_);
  if (!running_ || running_->job_id() != job_id) {
    return absl::NotFoundError(absl::StrCat("job ", job_id, " is not running"));
  }
  if (running_->run_id() != run_id) {
    return absl::FailedPreconditionError(absl::StrCat("job ", job_id, " runs as run ",
                                                      running_->run_id(), "; this is from run ",
                                                      run_id, ", an earlier one, and is ignored"));
  }
  return running_;
}

absl::Status JobManager::Report(const proto::StepReport& report) {
  HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobRun> run,
                          CurrentRun(report.job_id(), report.run_id()));
  return run->Report(report);
}

absl::Status JobManager::ReportEval(const proto::EvalReport& report) {
  HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobRun> run,
                          CurrentRun(report.job_id(), report.run_id()));
  return run->ReportEval(report);
}

JobManager::Snapshot JobManager::TakeSnapshot() const {
  Snapshot snapshot;
  std::shared_ptr<JobRun> run;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& id : order_) snapshot.jobs.push_back(StatusLocked(*jobs_.at(id)));
    run = running_;
  }
  if (run) {
    snapshot.running_job = run->job_id();
    snapshot.queue_depths = run->QueueDepths();
    snapshot.ps_stats = run->PsStats();  // an RPC: outside mu_
  }
  return snapshot;
}

absl::Status JobManager::AcceptDense(const std::string& node_id, const std::string& job_id,
                                     std::vector<float> values, const DenseUpload& meta) {
  HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobRun> run, CurrentRun(job_id, meta.run_id));
  return run->AcceptDense(node_id, std::move(values), meta);
}

absl::StatusOr<proto::ExportJobResponse> JobManager::Export(const std::string& job_id,
                                                            const std::string& out_dir,
                                                            const std::string& since) {
  std::shared_ptr<JobRun> run;
  std::string final_checkpoint;
  {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
    const Job& job = *it->second;
    if (job.state != proto::JOB_SUCCEEDED) {
      return absl::FailedPreconditionError(absl::StrCat("job ", job_id, " is ",
                                                        proto::JobState_Name(job.state),
                                                        ": only a succeeded job can be "
                                                        "exported"));
    }
    run = job.run;
    final_checkpoint =
        run != nullptr ? run->Progress().last_checkpoint() : job.final_progress.last_checkpoint();
  }
  // From the PS shards while they hold the job's tables; else from its
  // final checkpoint (a later job started, or this scheduler restarted).
  if (run != nullptr && !run->EndedOnPs()) return run->Export(out_dir, since);
  if (auto manifest = checkpoint::ReadManifest(final_checkpoint);
      manifest.ok() && manifest->final()) {
    return ExportFinalCheckpoint(final_checkpoint, out_dir, since);
  }
  if (run != nullptr) return run->Export(out_dir, since);  // says why it cannot
  return absl::FailedPreconditionError(absl::StrCat(
      "job ", job_id,
      " ran under an earlier scheduler process and has no final checkpoint to export from "
      "(give a job checkpoint.dir to keep it exportable, or export it before restarting)"));
}

}  // namespace herald::scheduler
