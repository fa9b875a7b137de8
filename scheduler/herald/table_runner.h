#pragma once
// Runs one function per embedding table, on the calling thread alone or on
// a pool of threads. The planner's phases touch disjoint state per table
// (its row directory, every worker's cache layout of that table, the
// table's part of the plan), so running tables at once changes no result:
// a plan is the same bits whatever the thread count.

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "common/thread_pool.h"

namespace herald::scheduler {

class TableRunner {
 public:
  // threads ≤ 1: every table on the calling thread.
  explicit TableRunner(uint32_t threads = 1);

  uint32_t threads() const { return threads_; }

  // fn(t) for every t in [0, num_tables), each exactly once; returns when
  // all are done. Each thread (the caller's included) takes the next table
  // nobody has taken. fn must only touch table t's state.
  void ForEachTable(uint32_t num_tables, const std::function<void(uint32_t)>& fn) const;

  // The same for fallible work: every table runs; the error of the lowest
  // failing table is returned (the same one whatever the thread count).
  absl::Status ForEachTableStatus(uint32_t num_tables,
                                  const std::function<absl::Status(uint32_t)>& fn) const;

 private:
  uint32_t threads_;
  // Shared by copies of a planner (Planner::Clone); ThreadPool is thread-safe.
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace herald::scheduler
