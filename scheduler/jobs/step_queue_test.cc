#include "scheduler/jobs/step_queue.h"

#include <memory>

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

TEST(StepQueue, BoundedFinishAndClose) {
  StepQueue q(2);
  auto step = std::make_shared<proto::WorkerStep>();
  EXPECT_TRUE(*q.Push(step, absl::ZeroDuration()));
  EXPECT_TRUE(*q.Push(step, absl::ZeroDuration()));
  EXPECT_FALSE(*q.Push(step, absl::ZeroDuration()));  // full: back-pressure
  EXPECT_NE(*q.Pop(absl::ZeroDuration()), nullptr);
  EXPECT_TRUE(*q.Push(step, absl::ZeroDuration()));
  q.Finish();
  EXPECT_FALSE(q.finished_and_drained());
  EXPECT_NE(*q.Pop(absl::ZeroDuration()), nullptr);
  EXPECT_NE(*q.Pop(absl::ZeroDuration()), nullptr);
  EXPECT_EQ(*q.Pop(absl::ZeroDuration()), nullptr);
  EXPECT_TRUE(q.finished_and_drained());

  StepQueue closed(1);
  ASSERT_TRUE(*closed.Push(step, absl::ZeroDuration()));
  closed.Close(absl::CancelledError("stop"));
  EXPECT_TRUE(absl::IsCancelled(closed.Pop(absl::ZeroDuration()).status()));
  EXPECT_TRUE(absl::IsCancelled(closed.Push(step, absl::ZeroDuration()).status()));
}

}  // namespace
}  // namespace herald::scheduler
