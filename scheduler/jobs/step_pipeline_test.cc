// StepPipeline: the work runs on its own thread, one iteration at a time,
// in submission order, while the caller goes on; buffers come back; the
// first error stops it and reaches the caller.

#include "scheduler/jobs/step_pipeline.h"

#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

StepPipeline::Iteration Numbered(uint64_t i) {
  StepPipeline::Iteration it;
  it.plan.iteration = i;
  it.batch.num_samples = static_cast<uint32_t>(100 + i);
  return it;
}

TEST(StepPipeline, RunsEachIterationInOrderOnItsThreadWhileTheCallerGoesOn) {
  absl::Mutex mu;
  std::vector<uint64_t> done;
  std::thread::id worker;
  absl::Notification release_first;
  StepPipeline steps([&](const StepPipeline::Iteration& it) {
    if (it.plan.iteration == 0) release_first.WaitForNotification();
    absl::MutexLock lock(&mu);
    done.push_back(it.plan.iteration);
    worker = std::this_thread::get_id();
    return absl::OkStatus();
  });
  StepPipeline::Iteration next = Numbered(0);
  ASSERT_TRUE(steps.Submit(&next).ok());
  // Iteration 0 is still in flight (its work waits for us): Submit returned.
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(done.empty());
  }
  release_first.Notify();
  for (uint64_t i = 1; i < 5; ++i) {
    next = Numbered(i);
    ASSERT_TRUE(steps.Submit(&next).ok());
    // The finished iteration's buffers come back.
    EXPECT_EQ(next.plan.iteration, i - 1);
    EXPECT_EQ(next.batch.num_samples, 100 + i - 1);
  }
  ASSERT_TRUE(steps.Drain().ok());
  absl::MutexLock lock(&mu);
  EXPECT_EQ(done, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_NE(worker, std::this_thread::get_id());
}

TEST(StepPipeline, TheFirstErrorStopsItAndReachesTheCaller) {
  std::vector<uint64_t> done;  // the pipeline thread's until Drain returns
  StepPipeline steps([&](const StepPipeline::Iteration& it) {
    done.push_back(it.plan.iteration);
    return it.plan.iteration == 1 ? absl::UnavailableError("queue closed") : absl::OkStatus();
  });
  StepPipeline::Iteration next = Numbered(0);
  ASSERT_TRUE(steps.Submit(&next).ok());
  next = Numbered(1);
  ASSERT_TRUE(steps.Submit(&next).ok());
  next = Numbered(2);
  const absl::Status refused = steps.Submit(&next);
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable) << refused;
  EXPECT_EQ(next.plan.iteration, 2u) << "not taken";
  EXPECT_EQ(steps.Drain().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(done, (std::vector<uint64_t>{0, 1}));
}

}  // namespace
}  // namespace herald::scheduler
