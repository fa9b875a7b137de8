#include "worker/runtime/step_stream.h"

#include <vector>

#include "absl/synchronization/mutex.h"
#include "cluster/testing/fake_scheduler_client.h"
#include "gtest/gtest.h"

namespace herald::worker {
namespace {

using cluster::testing::FakeStepReader;

std::vector<proto::WorkerStep> Steps(int n) {
  std::vector<proto::WorkerStep> steps(n);
  for (int i = 0; i < n; ++i) steps[i].set_iteration(i);
  return steps;
}

// What on_end saw: how often, and the last status.
struct Ends {
  absl::Mutex mu;
  int count ABSL_GUARDED_BY(mu) = 0;
  absl::Status last ABSL_GUARDED_BY(mu);
  std::function<void(const absl::Status&)> Callback() {
    return [this](const absl::Status& s) {
      absl::MutexLock lock(&mu);
      ++count;
      last = s;
    };
  }
};

// The scheduler sent every step and ended the stream OK while the worker
// had not run them yet: each is still delivered, in order, and the end
// reaches on_end as OK (which calls nothing off).
TEST(StepStream, AnOkEndStillDeliversEveryStepReadAhead) {
  FakeStepReader reader(Steps(5), absl::OkStatus());
  Ends ends;
  StepStream stream(&reader, ends.Callback(), /*ahead=*/2);
  proto::WorkerStep step;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(stream.Next(&step)) << i;
    EXPECT_EQ(step.iteration(), static_cast<uint64_t>(i));
  }
  EXPECT_FALSE(stream.Next(&step));
  EXPECT_TRUE(stream.Finish().ok());
  absl::MutexLock lock(&ends.mu);
  EXPECT_EQ(ends.count, 1);
  EXPECT_TRUE(ends.last.ok()) << ends.last;
}

// A failed run ends the stream with its status: on_end gets it (the worker
// then calls off its calls in flight), and steps already sent still come.
TEST(StepStream, AnErrorEndReachesOnEndWithItsStatus) {
  FakeStepReader reader(Steps(1), absl::AbortedError("worker 1 failed"));
  Ends ends;
  StepStream stream(&reader, ends.Callback());
  proto::WorkerStep step;
  ASSERT_TRUE(stream.Next(&step));
  EXPECT_FALSE(stream.Next(&step));
  const absl::Status end = stream.Finish();
  EXPECT_TRUE(absl::IsAborted(end)) << end;
  absl::MutexLock lock(&ends.mu);
  EXPECT_EQ(ends.count, 1);
  EXPECT_EQ(ends.last.message(), "worker 1 failed");
}

// A stream the scheduler holds open (until the run ends) is finished by
// cancelling it; unread steps are dropped and Finish says Cancelled.
TEST(StepStream, FinishAfterCancelDropsUnreadStepsAndReturns) {
  FakeStepReader reader(Steps(8), absl::OkStatus(), /*hold_open=*/true);
  Ends ends;
  StepStream stream(&reader, ends.Callback(), /*ahead=*/2);
  proto::WorkerStep step;
  ASSERT_TRUE(stream.Next(&step));
  reader.Cancel();
  EXPECT_TRUE(absl::IsCancelled(stream.Finish()));
  EXPECT_FALSE(stream.Next(&step));
  absl::MutexLock lock(&ends.mu);
  EXPECT_EQ(ends.count, 1);
  EXPECT_TRUE(absl::IsCancelled(ends.last));
}

}  // namespace
}  // namespace herald::worker
