#include "scheduler/jobs/step_queue.h"

namespace herald::scheduler {

absl::StatusOr<bool> StepQueue::Push(std::shared_ptr<const proto::WorkerStep> step,
                                     absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !closed_.ok() || steps_.size() < capacity_;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&room), wait)) return false;
  if (!closed_.ok()) return closed_;
  steps_.push_back(std::move(step));
  return true;
}

absl::StatusOr<std::shared_ptr<const proto::WorkerStep>> StepQueue::Pop(absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !closed_.ok() || !steps_.empty() || finished_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
  if (!closed_.ok()) return closed_;
  if (steps_.empty()) return std::shared_ptr<const proto::WorkerStep>();
  auto step = std::move(steps_.front());
  steps_.pop_front();
  return step;
}

void StepQueue::Finish() {
  absl::MutexLock lock(&mu_);
  finished_ = true;
}

void StepQueue::Close(absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (closed_.ok()) closed_ = std::move(status);
  steps_.clear();
}

bool StepQueue::finished_and_drained() const {
  absl::MutexLock lock(&mu_);
  return finished_ && steps_.empty();
}

size_t StepQueue::size() const {
  absl::MutexLock lock(&mu_);
  return steps_.size();
}

}  // namespace herald::scheduler
