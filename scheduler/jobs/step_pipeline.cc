#include "scheduler/jobs/step_pipeline.h"

#include <utility>

#include "common/thread_name.h"

namespace herald::scheduler {

StepPipeline::StepPipeline(Work work) : work_(std::move(work)) {
  thread_ = std::thread([this] { Run(); });
}

StepPipeline::~StepPipeline() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

absl::Status StepPipeline::Submit(Iteration* next) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !busy_; };
  mu_.Await(absl::Condition(&idle));
  if (!error_.ok()) return error_;
  std::swap(slot_, *next);
  busy_ = true;
  return absl::OkStatus();
}

absl::Status StepPipeline::Drain() {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !busy_; };
  mu_.Await(absl::Condition(&idle));
  return error_;
}

void StepPipeline::Run() {
  NameThisThread("step-encoder");
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return busy_ || stopping_; };
      mu_.Await(absl::Condition(&ready));
      if (!busy_) return;  // stopping, nothing in flight
    }
    const absl::Status done = work_(slot_);
    absl::MutexLock lock(&mu_);
    if (!done.ok() && error_.ok()) error_ = done;
    busy_ = false;
  }
}

}  // namespace herald::scheduler
