#include "ps_server/shard/iteration_clock.h"

#include <thread>

#include "gtest/gtest.h"

namespace herald::ps {
namespace {

TEST(IterationClock, StartsAreReadyOnceThePreviousIterationCommitted) {
  IterationClock clock(5);  // restored after iteration 4
  EXPECT_TRUE(clock.StartReady(5));
  EXPECT_FALSE(clock.StartReady(6));
  EXPECT_FALSE(clock.SettledAt(5));
  const uint64_t t = clock.BeginCommit();
  EXPECT_EQ(t, 5u);
  EXPECT_EQ(clock.open(), 6u);        // reports go to the next iteration
  EXPECT_FALSE(clock.StartReady(6));  // still committing
  clock.FinishCommit(t);
  EXPECT_TRUE(clock.StartReady(6));
  EXPECT_TRUE(clock.SettledAt(5));
  EXPECT_EQ(clock.committed(), 6u);
  // A later commit under way: 6's state is not the tables' any more.
  clock.BeginCommit();
  EXPECT_FALSE(clock.SettledAt(5));
}

TEST(IterationClock, AnEndedJobReleasesEveryWaiter) {
  IterationClock clock(0);
  EXPECT_FALSE(clock.StartReady(3));
  clock.End("");
  EXPECT_TRUE(clock.ended());
  EXPECT_EQ(clock.ended_reason(), "ended");
  EXPECT_TRUE(clock.StartReady(3));
  EXPECT_TRUE(clock.SettledAt(3));
}

TEST(CommitWindow, HoldsTheRowsAndLetsTheShardMutexGoWhileItLives) {
  absl::Mutex shard, rows;
  shard.Lock();
  {
    CommitWindow window(&shard, &rows, CommitWindow::Rows::kExclusive);
    // (The window hands the locks over: beyond the static analysis.)
    std::thread other([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      EXPECT_TRUE(shard.TryLock());  // reports for later iterations go on
      shard.Unlock();
      EXPECT_FALSE(rows.ReaderTryLock());  // no reader sees a half-written commit
    });
    other.join();
    window.ReleaseRows();
    std::thread reader([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      EXPECT_TRUE(rows.ReaderTryLock());
      rows.ReaderUnlock();
    });
    reader.join();
  }
  shard.AssertHeld();  // held again once the window closed
  shard.Unlock();
}

TEST(CommitWindow, SharedLetsReadersInAndKeepsWritersOut) {
  absl::Mutex shard, rows;
  shard.Lock();
  {
    CommitWindow window(&shard, &rows, CommitWindow::Rows::kShared);
    std::thread other([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      EXPECT_TRUE(shard.TryLock());
      shard.Unlock();
      EXPECT_TRUE(rows.ReaderTryLock());  // a fetch waits per stripe instead
      rows.ReaderUnlock();
      EXPECT_FALSE(rows.TryLock());  // a checkpoint waits for the commit
    });
    other.join();
    window.ReleaseRows();
    std::thread writer([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      EXPECT_TRUE(rows.TryLock());
      rows.Unlock();
    });
    writer.join();
  }
  shard.AssertHeld();
  shard.Unlock();
}

}  // namespace
}  // namespace herald::ps
