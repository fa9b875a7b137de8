#include "worker/runtime/step_stream.h"

#include "absl/time/clock.h"
#include "common/thread_name.h"

namespace herald::worker {

StepStream::StepStream(cluster::StepReader* reader, std::function<void(const absl::Status&)> on_end,
                       size_t ahead, Decoder decode)
    : reader_(reader),
      on_end_(std::move(on_end)),
      ahead_(ahead < 1 ? 1 : ahead),
      decode_(std::move(decode)),
      thread_([this] {
        NameThisThread("step-stream");
        Read();
      }) {}

StepStream::~StepStream() {
  Finish().IgnoreError();  // the stream's status was the caller's to ask for
  thread_.join();
}

void StepStream::Read() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return draining_ || queue_.size() < ahead_;
      };
      mu_.Await(absl::Condition(&room));
    }
    Arrived step;
    if (!reader_->Read(&step.wire)) break;
    if (decode_ && !step.wire.has_eval()) {
      const absl::Time start = absl::Now();
      step.decoded = decode_(step.wire);
      step.decode_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
    }
    absl::MutexLock lock(&mu_);
    if (!draining_) queue_.push_back(std::move(step));
  }
  const absl::Status status = reader_->Finish();
  if (on_end_) on_end_(status);
  absl::MutexLock lock(&mu_);
  status_ = status;
  ended_ = true;
}

bool StepStream::Next(proto::WorkerStep* out) {
  Arrived arrived;
  if (!Next(&arrived)) return false;
  *out = std::move(arrived.wire);
  return true;
}

bool StepStream::Next(Arrived* out) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return ended_ || !queue_.empty(); };
  mu_.Await(absl::Condition(&ready));
  if (queue_.empty()) return false;
  *out = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

StepStream::Arrived* StepStream::Peek(size_t k) {
  absl::MutexLock lock(&mu_);
  return k == 0 || queue_.size() < k ? nullptr : &queue_[k - 1];
}

absl::Status StepStream::Finish() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
  queue_.clear();
  mu_.Await(absl::Condition(&ended_));
  return status_;
}

}  // namespace herald::worker
