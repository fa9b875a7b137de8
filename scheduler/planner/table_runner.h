#pragma once
// Runs one function per embedding table, on the calling thread alone or on
// a pool of threads. The planner's phases touch disjoint state per table
// (its row directory, every worker's cache layout of that table, the
// table's part of the plan), so running tables at once changes no result:
// a plan is the same bits whatever the thread count.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "common/thread_pool.h"

namespace herald::scheduler {

class TableRunner {
 public:
  // threads ≤ 1: every table on the calling thread.
  explicit TableRunner(uint32_t threads = 1);

  uint32_t threads() const { return threads_; }

  // ForEachTable over `order.size()` tables takes them in this order (a
  // permutation of the table numbers): the largest first, so the threads'
  // last tables are small ones and none waits long for another. Other
  // table counts, and ForEach, keep the natural order.
  void SetTableOrder(std::vector<uint32_t> order) { order_ = std::move(order); }

  // fn(t) for every t in [0, num_tables), each exactly once; returns when
  // all are done. With threads > 1 the pool's threads run them, each taking
  // the next table nobody has taken (in the table order, above), and the
  // caller waits. fn must only touch table t's state.
  void ForEachTable(uint32_t num_tables, const std::function<void(uint32_t)>& fn) const;
  // The same for items that are not tables: fn(i) for every i in [0, n).
  void ForEach(uint32_t n, const std::function<void(uint32_t)>& fn) const;

  // The same for fallible work: every table runs; the error of the lowest
  // failing table is returned (the same one whatever the thread count).
  absl::Status ForEachTableStatus(uint32_t num_tables,
                                  const std::function<absl::Status(uint32_t)>& fn) const;

  // Work for the other threads while the caller runs a serial step:
  // fn(i) for every i in [0, items).
  struct SideWork {
    uint32_t items = 0;
    std::function<void(uint32_t)> fn;
  };
  // serial() on the calling thread while the pool's threads run side.fn(i)
  // for every i, each exactly once. Returns when all are done. With one thread: serial(),
  // then every item in order. serial and side must touch disjoint state,
  // and each item its own, so the result is the same for any thread count.
  void Beside(const std::function<void()>& serial, const SideWork& side) const;

 private:
  uint32_t threads_;
  std::vector<uint32_t> order_;  // empty: the natural order
  // Shared by copies of a planner (Planner::Clone); ThreadPool is thread-safe.
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace herald::scheduler
