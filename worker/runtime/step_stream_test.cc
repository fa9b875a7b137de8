#include "worker/runtime/step_stream.h"

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "cluster/testing/fake_scheduler_client.h"
#include "common/thread_name.h"
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

// Given a decoder, the reading thread decodes every training step as it
// arrives (the executing thread only takes the result), and leaves
// evaluations alone; Peek shows the next step decoded too.
TEST(StepStream, TheReadingThreadDecodesTrainingStepsAhead) {
  std::vector<proto::WorkerStep> steps = Steps(3);
  steps[1].mutable_eval()->set_index(0);  // an evaluation between two steps
  FakeStepReader reader(steps, absl::OkStatus());
  Ends ends;
  absl::Mutex mu;
  std::vector<std::string> decoded_on;  // the decoding threads' names
  StepStream stream(&reader, ends.Callback(), /*ahead=*/2, [&](const proto::WorkerStep& wire) {
    absl::MutexLock lock(&mu);
    decoded_on.push_back(ThisThreadName());
    plan::Step step;
    step.iteration = wire.iteration() + 100;  // marks what the decoder made
    return absl::StatusOr<plan::Step>(std::move(step));
  });
  StepStream::Arrived arrived;
  ASSERT_TRUE(stream.Next(&arrived));
  ASSERT_TRUE(arrived.decoded.has_value());
  ASSERT_TRUE(arrived.decoded->ok());
  EXPECT_EQ((*arrived.decoded)->iteration, 100u);
  EXPECT_GE(arrived.decode_ms, 0);
  ASSERT_TRUE(stream.Next(&arrived));
  EXPECT_TRUE(arrived.wire.has_eval());
  EXPECT_FALSE(arrived.decoded.has_value());
  ASSERT_TRUE(stream.Next(&arrived));
  EXPECT_EQ((*arrived.decoded)->iteration, 102u);
  EXPECT_FALSE(stream.Next(&arrived));
  EXPECT_TRUE(stream.Finish().ok());
  absl::MutexLock lock(&mu);
  EXPECT_EQ(decoded_on, (std::vector<std::string>{"step-stream", "step-stream"}));
}

}  // namespace
}  // namespace herald::worker
