#include "worker/runtime/step_reporter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "common/thread_name.h"

namespace herald::worker {

StepReporter::StepReporter(cluster::SchedulerClient* scheduler, OnFailure on_failure,
                           size_t max_queued)
    : scheduler_(scheduler),
      on_failure_(std::move(on_failure)),
      max_queued_(max_queued < 1 ? 1 : max_queued),
      thread_([this] {
        NameThisThread("step-report");
        Run();
      }) {}

StepReporter::~StepReporter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // the thread runs what is queued first
  }
  thread_.join();
}

absl::Status StepReporter::StartCommit(uint64_t iteration, Commit commit) {
  Job job;
  job.iteration = iteration;
  job.commit = std::move(commit);
  return Queue(std::move(job));
}

absl::Status StepReporter::Submit(proto::StepReport report) {
  Job job;
  job.iteration = report.iteration();
  job.report = std::move(report);
  return Queue(std::move(job));
}

absl::Status StepReporter::Queue(Job job) {
  absl::MutexLock lock(&mu_);
  auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !failure_.ok() || queue_.size() < max_queued_;
  };
  mu_.Await(absl::Condition(&room));
  if (!failure_.ok()) return failure_;
  queue_.push_back(std::move(job));
  return absl::OkStatus();
}

absl::Status StepReporter::Flush() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !failure_.ok() || (queue_.empty() && !running_);
  };
  mu_.Await(absl::Condition(&idle));
  return failure_;
}

void StepReporter::Run() {
  for (;;) {
    Job job;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&work));
      if (queue_.empty() || !failure_.ok()) return;  // stopping and drained, or failed
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    const absl::Status sent = Send(job);
    if (!sent.ok())
      on_failure_(job.iteration, sent);  // before StartCommit, Submit, Flush return it
    absl::MutexLock lock(&mu_);
    running_ = false;
    if (!sent.ok()) {
      failure_ = sent;
      queue_.clear();
    }
  }
}

absl::Status StepReporter::Send(Job& job) {
  if (job.commit) {
    const absl::Time start = absl::Now();
    absl::StatusOr<ps::PsDiskReads> reads = job.commit();
    if (!reads.ok()) {
      return Annotate(reads.status(), absl::StrCat("iteration ", job.iteration, " iteration done"));
    }
    committed_[job.iteration] = {absl::ToDoubleMilliseconds(absl::Now() - start), *reads};
    return absl::OkStatus();
  }
  proto::StepReport& report = job.report;
  if (auto it = committed_.find(job.iteration); it != committed_.end()) {
    report.set_commit_ms(it->second.ms);
    report.set_ps_disk_rows_critical(it->second.reads.critical);
    report.set_ps_disk_rows_ahead(it->second.reads.ahead);
    committed_.erase(it);
  }
  report.set_report_ms(last_report_ms_);
  const absl::Time start = absl::Now();
  const absl::Status sent = scheduler_->ReportStep(report);
  last_report_ms_ = absl::ToDoubleMilliseconds(absl::Now() - start);
  return Annotate(sent, "reporting the step");
}

}  // namespace herald::worker
