#pragma once
// A job's step stream read on a thread of its own, ahead of the executor,
// so the steps after the current one are known while the current one runs
// (the executor then starts their early fetches: StepExecutor::Run's
// `ahead`).
// Given a decoder, the reading thread also decodes each training step as it
// arrives, so the executing thread does not.
// The scheduler's step queue already bounds how far ahead steps exist; this
// holds at most `ahead` of them.
//
// The stream's end and its status: the reading thread finishes the call
// (StepReader::Finish) as soon as the stream ends, so its status is known
// then, while steps it read ahead may still wait to be executed. OK means
// the scheduler sent every step and the run ended well; any other status
// means the run failed, was cancelled, or the stream broke.

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cluster/scheduler_client.h"
#include "plan/step.h"
#include "proto/scheduler.pb.h"

namespace herald::worker {

class StepStream {
 public:
  // A training step's decoder (plan::DecodeWorkerStep with the job's shape).
  using Decoder = std::function<absl::StatusOr<plan::Step>(const proto::WorkerStep&)>;
  // A step as it arrived, and where a decoder was given and it is a
  // training step (not WorkerStep.eval), decoded with the time that took.
  struct Arrived {
    proto::WorkerStep wire;
    std::optional<absl::StatusOr<plan::Step>> decoded;
    double decode_ms = 0;
  };

  // `reader` must outlive this object; this object finishes it (the caller
  // never calls reader->Finish()). `on_end` runs once, on the reading
  // thread, with the stream's final status when the stream ends, possibly
  // while a step still executes: an OK status is a normal end, not a reason
  // to stop work in flight. `decode` (may be null) runs on the reading
  // thread.
  StepStream(cluster::StepReader* reader, std::function<void(const absl::Status&)> on_end,
             size_t ahead = 2, Decoder decode = nullptr);
  // Finish(), then joins the reading thread.
  ~StepStream();

  // The next step, waiting for it; false once the stream ended and every
  // step read was returned.
  bool Next(Arrived* out);
  bool Next(proto::WorkerStep* out);  // the wire step alone
  // The k-th step after the one Next returned last (1: the next one), if
  // it already arrived; null otherwise (never waits). Valid, and only the
  // caller's, until the next call of Next.
  Arrived* Peek(size_t k = 1);
  // Waits for the stream's end and returns its status; steps not yet taken
  // by Next are dropped, and later ones are read and dropped. REQUIRES: the
  // stream ends by itself (the scheduler ends it), or the caller cancelled
  // it first (StepReader::Cancel).
  absl::Status Finish();

 private:
  void Read();

  cluster::StepReader* reader_;
  const std::function<void(const absl::Status&)> on_end_;
  const size_t ahead_;
  const Decoder decode_;
  absl::Mutex mu_;
  // A deque: appending keeps the element Peek returned where it is.
  std::deque<Arrived> queue_ ABSL_GUARDED_BY(mu_);
  bool draining_ ABSL_GUARDED_BY(mu_) = false;  // Finish() called: read, drop
  bool ended_ ABSL_GUARDED_BY(mu_) = false;     // the call finished
  absl::Status status_ ABSL_GUARDED_BY(mu_);    // its status, once ended_
  std::thread thread_;
};

}  // namespace herald::worker
