#include "scheduler/planner/table_runner.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

// The tables each run of fn saw, in the order one thread saw them.
std::vector<uint32_t> TablesSeen(const TableRunner& run, uint32_t n, bool tables) {
  absl::Mutex mu;
  std::vector<uint32_t> seen;
  auto record = [&](uint32_t t) {
    absl::MutexLock lock(&mu);
    seen.push_back(t);
  };
  if (tables) {
    run.ForEachTable(n, record);
  } else {
    run.ForEach(n, record);
  }
  return seen;
}

TEST(TableRunnerTest, OneThreadTakesTheTablesInTheTableOrder) {
  TableRunner run(1);
  EXPECT_EQ(TablesSeen(run, 4, true), (std::vector<uint32_t>{0, 1, 2, 3}));
  run.SetTableOrder({2, 0, 3, 1});
  EXPECT_EQ(TablesSeen(run, 4, true), (std::vector<uint32_t>{2, 0, 3, 1}));
  // Items that are not tables, and other table counts, keep their order.
  EXPECT_EQ(TablesSeen(run, 4, false), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(TablesSeen(run, 3, true), (std::vector<uint32_t>{0, 1, 2}));
}

TEST(TableRunnerTest, ThreadsRunEveryTableExactlyOnce) {
  for (uint32_t threads : {2u, 3u, 8u}) {
    TableRunner run(threads);
    run.SetTableOrder({4, 1, 0, 3, 2});
    for (bool tables : {true, false}) {
      std::vector<uint32_t> seen = TablesSeen(run, 5, tables);
      std::sort(seen.begin(), seen.end());
      EXPECT_EQ(seen, (std::vector<uint32_t>{0, 1, 2, 3, 4})) << threads << " threads";
    }
    std::vector<absl::Status> results = {absl::OkStatus(), absl::NotFoundError("3"),
                                         absl::OkStatus(), absl::InternalError("1"),
                                         absl::OkStatus()};
    // The pool runs the tables; the caller only waits.
    std::atomic<int> on_caller{0};
    const std::thread::id caller = std::this_thread::get_id();
    run.ForEachTable(5, [&](uint32_t) { on_caller += std::this_thread::get_id() == caller; });
    EXPECT_EQ(on_caller.load(), 0) << threads << " threads";
    // The lowest failing table's error, whatever the order and threads.
    absl::Status s = run.ForEachTableStatus(5, [&](uint32_t t) { return results[t]; });
    EXPECT_EQ(s, absl::NotFoundError("3")) << threads << " threads";
  }
}

// Beside: the serial step runs on the calling thread, each side item exactly
// once; with one thread the serial step comes first, then the items in order.
TEST(TableRunnerTest, SideWorkRunsBesideTheSerialStepOnTheOtherThreads) {
  for (uint32_t threads : {1u, 2u, 3u}) {
    TableRunner run(threads);
    absl::Mutex mu;
    std::vector<int64_t> events;  // -1: the serial step; i: side item i
    std::thread::id serial_thread;
    run.Beside(
        [&] {
          serial_thread = std::this_thread::get_id();
          absl::MutexLock lock(&mu);
          events.push_back(-1);
        },
        {7, [&](uint32_t i) {
           absl::MutexLock lock(&mu);
           events.push_back(i);
         }});
    EXPECT_EQ(serial_thread, std::this_thread::get_id()) << threads << " threads";
    if (threads > 1) {  // the pool's threads take every side item
      std::atomic<int> on_caller{0};
      run.Beside([] {},
                 {7, [&](uint32_t) { on_caller += std::this_thread::get_id() == serial_thread; }});
      EXPECT_EQ(on_caller.load(), 0) << threads << " threads";
    }
    if (threads == 1) {
      EXPECT_EQ(events, (std::vector<int64_t>{-1, 0, 1, 2, 3, 4, 5, 6}));
    }
    std::sort(events.begin(), events.end());
    EXPECT_EQ(events, (std::vector<int64_t>{-1, 0, 1, 2, 3, 4, 5, 6})) << threads << " threads";
    // No side work: just the serial step.
    int serial_runs = 0;
    run.Beside([&] { ++serial_runs; }, {});
    EXPECT_EQ(serial_runs, 1);
  }
}

}  // namespace
}  // namespace herald::scheduler
