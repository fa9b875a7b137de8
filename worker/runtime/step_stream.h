#pragma once
// A job's step stream read on a thread of its own, ahead of the executor,
// so the step after the current one is known while the current one runs
// (the executor then starts its early fetches: StepExecutor::Run's `next`).
// The scheduler's step queue already bounds how far ahead steps exist; this
// holds at most `ahead` of them.

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/sync_stream.h"
#include "proto/scheduler.grpc.pb.h"

namespace herald::worker {

class StepStream {
 public:
  // `reader` must outlive this object; the caller calls its Finish() after
  // this object is destroyed (or after Next returned false). `on_end` runs
  // on the reading thread when the stream ends (the scheduler ended it, or
  // it was cancelled), possibly while a step still executes.
  StepStream(grpc::ClientReader<proto::WorkerStep>* reader, std::function<void()> on_end,
             size_t ahead = 2);
  // Waits for the reading thread: cancel the stream's context first when
  // stopping before its end.
  ~StepStream();

  // The next step, waiting for it; false once the stream ended.
  bool Next(proto::WorkerStep* out);
  // The step after the one Next returned last, if it already arrived; null
  // otherwise (never waits). Valid until the next call of Next.
  const proto::WorkerStep* Peek();

 private:
  void Read();

  grpc::ClientReader<proto::WorkerStep>* reader_;
  const std::function<void()> on_end_;
  const size_t ahead_;
  absl::Mutex mu_;
  std::deque<proto::WorkerStep> queue_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace herald::worker
