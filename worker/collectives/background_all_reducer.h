#pragma once
// A DenseAllReducer for host memory whose StartAllReduceSum runs the inner
// reducer's all-reduce on a thread of its own ("dense-reduce"), so a worker
// pushes rows, writes back and updates its own rows while the dense
// gradients travel. The bits are the inner reducer's: only the thread that
// runs it differs.

#include <memory>
#include <optional>

#include "absl/synchronization/notification.h"
#include "common/thread_pool.h"
#include "worker/collectives/all_reducer.h"

namespace herald::worker {

class BackgroundAllReducer final : public DenseAllReducer {
 public:
  explicit BackgroundAllReducer(std::unique_ptr<DenseAllReducer> inner);
  // Waits for an all-reduce still running.
  ~BackgroundAllReducer() override;

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  // On the calling thread.
  absl::Status AllReduceSum(float* data, size_t n) override;
  void StartAllReduceSum(float* data, size_t n) override;
  absl::Status FinishAllReduceSum() override;

 private:
  std::unique_ptr<DenseAllReducer> inner_;
  std::optional<absl::Notification> done_;  // set while one is started
  absl::Status status_;                     // written by the thread before done_
  ThreadPool thread_{1, "dense-reduce"};    // last: joined first
};

}  // namespace herald::worker
