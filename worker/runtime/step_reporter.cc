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
    stopping_ = true;  // the thread drains the queue first
  }
  thread_.join();
}

absl::Status StepReporter::Submit(Commit commit, proto::StepReport report) {
  absl::MutexLock lock(&mu_);
  auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !failure_.ok() || queue_.size() < max_queued_;
  };
  mu_.Await(absl::Condition(&room));
  if (!failure_.ok()) return failure_;
  queue_.push_back({std::move(commit), std::move(report)});
  return absl::OkStatus();
}

absl::Status StepReporter::Flush() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !failure_.ok() || (queue_.empty() && !sending_);
  };
  mu_.Await(absl::Condition(&idle));
  return failure_;
}

void StepReporter::Run() {
  for (;;) {
    Queued step;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); };
      mu_.Await(absl::Condition(&work));
      if (queue_.empty() || !failure_.ok()) return;  // stopping and drained, or failed
      step = std::move(queue_.front());
      queue_.pop_front();
      sending_ = true;
    }
    const uint64_t iteration = step.report.iteration();
    const absl::Status sent = Send(step);
    if (!sent.ok()) on_failure_(iteration, sent);  // before Submit and Flush return it
    absl::MutexLock lock(&mu_);
    sending_ = false;
    if (!sent.ok()) {
      failure_ = sent;
      queue_.clear();
    }
  }
}

absl::Status StepReporter::Send(Queued& step) {
  proto::StepReport& report = step.report;
  if (step.commit) {
    const absl::Time start = absl::Now();
    absl::StatusOr<ps::PsDiskReads> reads = step.commit();
    if (!reads.ok()) {
      return Annotate(reads.status(),
                      absl::StrCat("iteration ", report.iteration(), " iteration done"));
    }
    report.set_commit_ms(absl::ToDoubleMilliseconds(absl::Now() - start));
    report.set_ps_disk_rows_critical(reads->critical);
    report.set_ps_disk_rows_ahead(reads->ahead);
  }
  report.set_report_ms(last_report_ms_);
  const absl::Time start = absl::Now();
  const absl::Status sent = scheduler_->ReportStep(report);
  last_report_ms_ = absl::ToDoubleMilliseconds(absl::Now() - start);
  return Annotate(sent, "reporting the step");
}

}  // namespace herald::worker
