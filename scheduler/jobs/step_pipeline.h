#pragma once
// The job thread's second stage (issue 57, "scheduler headroom"): while it
// plans iteration i + 1, this thread builds, encodes and queues the steps
// of iteration i (JobRun::QueueIteration). One iteration is in flight at a
// time, so every worker's queue still receives the steps in iteration
// order; whatever must follow an iteration's steps in the queues (an
// evaluation's steps, a checkpoint's wait for the reports) calls Drain
// first. The plan and batch move in and their buffers come back, so no
// list is copied or reallocated.
//
// Thread-safe for one caller (the job thread). Destroying it waits for the
// iteration in flight: fail the job first (its queues close) so that the
// work does not wait for queue room.

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/data/key_batch.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {

class StepPipeline {
 public:
  // One planned iteration, as QueueIteration takes it.
  struct Iteration {
    IterationPlan plan;
    data::KeyBatch batch;
    bool last = false;
    double plan_ms = 0;
    uint64_t malformed_lines = 0;
  };
  // Queues one iteration's steps; an error stops the pipeline.
  using Work = std::function<absl::Status(const Iteration&)>;

  explicit StepPipeline(Work work);
  ~StepPipeline();
  StepPipeline(const StepPipeline&) = delete;
  StepPipeline& operator=(const StepPipeline&) = delete;

  // Waits for the iteration submitted before; its error, if it failed
  // (the pipeline then takes nothing more). Otherwise starts `*next`,
  // swapping it with the finished iteration's buffers (which the caller
  // reuses).
  absl::Status Submit(Iteration* next);
  // Waits until the iteration in flight is queued; the first error.
  absl::Status Drain();

 private:
  void Run();

  const Work work_;
  absl::Mutex mu_;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;  // slot_ holds work not yet done
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  // The pipeline thread's while busy_, the caller's otherwise.
  Iteration slot_;
  std::thread thread_;
};

}  // namespace herald::scheduler
