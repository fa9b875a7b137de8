#include "worker/runtime/step_stream.h"

namespace herald::worker {

StepStream::StepStream(grpc::ClientReader<proto::WorkerStep>* reader, std::function<void()> on_end,
                       size_t ahead)
    : reader_(reader),
      on_end_(std::move(on_end)),
      ahead_(ahead < 1 ? 1 : ahead),
      thread_([this] { Read(); }) {}

StepStream::~StepStream() {
  {
    absl::MutexLock lock(&mu_);
    ended_ = true;  // a Read() waiting for room gives up
  }
  thread_.join();
}

void StepStream::Read() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto room = [this]()
                      ABSL_SHARED_LOCKS_REQUIRED(mu_) { return ended_ || queue_.size() < ahead_; };
      mu_.Await(absl::Condition(&room));
      if (ended_) return;
    }
    proto::WorkerStep step;
    if (!reader_->Read(&step)) {
      if (on_end_) on_end_();
      absl::MutexLock lock(&mu_);
      ended_ = true;
      return;
    }
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(step));
  }
}

bool StepStream::Next(proto::WorkerStep* out) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return ended_ || !queue_.empty(); };
  mu_.Await(absl::Condition(&ready));
  if (queue_.empty()) return false;
  *out = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

const proto::WorkerStep* StepStream::Peek() {
  absl::MutexLock lock(&mu_);
  return queue_.empty() ? nullptr : &queue_.front();
}

}  // namespace herald::worker
