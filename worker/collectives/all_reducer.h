#pragma once
// Sum all-reduce of the dense gradients over the job's workers. Contract:
// every rank ends with the same bits (each element reduced once, then
// copied), so dense replicas never drift apart. Implementations: GlooAllReducer (CPU workers, TCP),
// SingleRankAllReducer (one worker), and the NCCL one on GPU workers.

#include <cstddef>
#include <utility>

#include "absl/status/status.h"

namespace herald::worker {

class DenseAllReducer {
 public:
  virtual ~DenseAllReducer() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // data[0..n) ← Σ_ranks data[0..n). `data` is device memory of the
  // implementation's device kind. Every rank must call with the same n.
  // Errors: Unavailable / DeadlineExceeded when a peer is gone.
  virtual absl::Status AllReduceSum(float* data, size_t n) = 0;

  // The same in two halves, so that the caller can work while the bytes
  // travel: Start returns once the reduction is under way (at once where it
  // runs on a thread of its own, BackgroundAllReducer; the default does all
  // of it here), FinishAllReduceSum waits for it and returns its status.
  // Between the two the caller must not touch data[0..n); every start is
  // finished, also on error paths.
  //
  // Buckets: where reduces_in_background(), several Starts on disjoint
  // ranges may precede one Finish (the dense gradients reduced while the
  // backward still computes the rest, as DDP does); they are reduced in
  // the order started, every rank must start the same ranges in the same
  // order, and Finish waits for all of them (its status: the first error).
  // Elsewhere one Start per Finish.
  virtual void StartAllReduceSum(float* data, size_t n) { started_.Update(AllReduceSum(data, n)); }
  virtual absl::Status FinishAllReduceSum() { return std::exchange(started_, absl::OkStatus()); }
  virtual bool reduces_in_background() const { return false; }

 private:
  absl::Status started_;  // the default Start's result, until Finish
};

class SingleRankAllReducer final : public DenseAllReducer {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  absl::Status AllReduceSum(float*, size_t) override { return absl::OkStatus(); }
};

}  // namespace herald::worker
