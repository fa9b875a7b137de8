#include "common/thread_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(ThreadPool, RunsEveryScheduledTask) {
  ThreadPool pool(3);
  std::atomic<int> sum{0};
  absl::BlockingCounter done(100);
  for (int i = 1; i <= 100; ++i) {
    pool.Schedule([&, i] {
      sum += i;
      done.DecrementCount();
    });
  }
  done.Wait();
  EXPECT_EQ(sum.load(), 5050);
}

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  ThreadPool pool(4);
  std::vector<int> hits(1001, 0);
  pool.ParallelFor(hits.size(), 10, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) hits[i]++;
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}

TEST(ThreadPool, ForEachItemRunsEveryItemOnceAndASlowOneHoldsUpNoOther) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(100);
  absl::Notification others_done;
  std::atomic<int> others{0};
  pool.ForEachItem(hits.size(), 3, [&](size_t i) {
    hits[i]++;
    if (i == 0) {  // waits until every other item ran: only other shares can run them
      others_done.WaitForNotification();
      return;
    }
    if (++others == 99) others_done.Notify();
  });
  for (const std::atomic<int>& h : hits) EXPECT_EQ(h.load(), 1);
}

// The caller runs `meanwhile` and no item; a call from a pool thread takes
// items itself, so even a one-thread pool finishes a nested call.
TEST(ThreadPool, ForEachItemOnPoolLeavesTheItemsToThePool) {
  ThreadPool pool(3);
  std::vector<int> hits(50, 0);
  std::atomic<int> on_caller{0};
  const std::thread::id caller = std::this_thread::get_id();
  bool meanwhile_ran = false;
  EXPECT_FALSE(pool.OnPoolThread());
  pool.ForEachItemOnPool(
      hits.size(), 3,
      [&](size_t i) {
        ++hits[i];
        if (std::this_thread::get_id() == caller) ++on_caller;
      },
      [&] { meanwhile_ran = std::this_thread::get_id() == caller; });
  EXPECT_TRUE(meanwhile_ran);
  EXPECT_EQ(on_caller.load(), 0);
  EXPECT_EQ(hits, std::vector<int>(50, 1));

  ThreadPool one(1);
  std::atomic<int> inner{0};
  one.ForEachItemOnPool(2, 1, [&](size_t) {
    EXPECT_TRUE(one.OnPoolThread());
    one.ForEachItemOnPool(4, 1, [&](size_t) { ++inner; });
  });
  EXPECT_EQ(inner.load(), 8);
}

TEST(ThreadPool, StopDrainsQueueAndIsIdempotent) {
  std::atomic<int> ran{0};
  ThreadPool pool(2);
  for (int i = 0; i < 50; ++i) pool.Schedule([&] { ran++; });
  pool.Stop();
  EXPECT_EQ(ran.load(), 50);
  pool.Stop();
  pool.Schedule([&] { ran++; });  // runs inline after Stop
  EXPECT_EQ(ran.load(), 51);
}

}  // namespace
}  // namespace herald
