#pragma once
// A DenseAllReducer for host memory whose StartAllReduceSum runs the inner
// reducer's all-reduce on a thread of its own ("dense-reduce"), so a worker
// computes the rest of its backward, pushes rows, writes back and updates
// its own rows while the dense gradients travel, bucket after bucket (see
// DenseAllReducer). The bits are the inner reducer's where it reduces each
// element alone (GlooAllReducer: in rank order, whatever the range): only
// the thread that runs it, and the ranges, differ.

#include <cstdint>
#include <memory>

#include "absl/synchronization/mutex.h"
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
  bool reduces_in_background() const override { return true; }

 private:
  std::unique_ptr<DenseAllReducer> inner_;
  absl::Mutex mu_;
  uint32_t running_ ABSL_GUARDED_BY(mu_) = 0;  // started, not yet reduced
  // The first error since the last Finish; the buckets after it are not
  // reduced (a peer is gone: each would wait for its timeout).
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  ThreadPool thread_{1, "dense-reduce"};  // last: joined first
};

}  // namespace herald::worker
