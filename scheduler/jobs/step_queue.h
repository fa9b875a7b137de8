#pragma once
// A worker's bounded queue of encoded steps between the planner and its
// WorkerSteps stream: Push blocks while the queue is full (back-pressure on
// the planner), Pop blocks while it is empty. Closing with an error drops
// what is queued and wakes both sides. Thread-safe.

#include <cstddef>
#include <deque>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/scheduler.pb.h"

namespace herald::scheduler {

class StepQueue {
 public:
  explicit StepQueue(size_t capacity) : capacity_(capacity) {}

  // Waits up to `wait` for room. Returns true if queued; false on timeout.
  // Errors: the close status once closed.
  absl::StatusOr<bool> Push(std::shared_ptr<const proto::WorkerStep> step, absl::Duration wait);

  // Waits up to `wait` for a step. nullptr on timeout, or once Finish()ed
  // and drained (see finished()). Errors: the close status once closed.
  absl::StatusOr<std::shared_ptr<const proto::WorkerStep>> Pop(absl::Duration wait);

  // No more steps will come; Pop drains what is queued, then returns nullptr.
  void Finish();
  // Fails both sides with `status` (not OK) and drops the queued steps.
  void Close(absl::Status status);

  bool finished_and_drained() const;
  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::deque<std::shared_ptr<const proto::WorkerStep>> steps_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::scheduler
