#include "common/cached_thread_pool.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(CachedThreadPool, TasksThatWaitForEachOtherAllRun) {
  // Each task waits until all of them have started: only a pool that never
  // queues a task behind a running one finishes this.
  constexpr int kTasks = 12;
  CachedThreadPool pool;
  absl::BlockingCounter started(kTasks);
  absl::Notification all_started;
  absl::BlockingCounter finished(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    pool.Run([&] {
      started.DecrementCount();
      all_started.WaitForNotification();
      finished.DecrementCount();
    });
  }
  started.Wait();
  all_started.Notify();
  finished.Wait();
  EXPECT_EQ(pool.num_threads(), static_cast<size_t>(kTasks));
}

TEST(CachedThreadPool, IdleThreadsAreReused) {
  CachedThreadPool pool;
  std::atomic<int> ran{0};
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 2; ++i) pool.Run([&] { ++ran; });
    pool.WaitUntilIdle();
  }
  EXPECT_EQ(ran.load(), 100);
  EXPECT_LE(pool.num_threads(), 2u);
}

TEST(CachedThreadPool, DestructorWaitsForRunningTasks) {
  std::atomic<bool> leaving{false};
  std::atomic<bool> finished{false};
  {
    CachedThreadPool pool;
    pool.Run([&] {
      while (!leaving.load()) std::this_thread::yield();
      finished = true;
    });
    leaving = true;
  }
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace herald
