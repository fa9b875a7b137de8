#include "scheduler/planner/table_runner.h"

#include <algorithm>
#include <atomic>
#include <vector>

namespace herald::scheduler {

TableRunner::TableRunner(uint32_t threads) : threads_(std::max<uint32_t>(threads, 1)) {
  // ParallelFor splits work into at most as many chunks as the pool has
  // threads and runs the first on the caller, so one pool thread stays idle.
  if (threads_ > 1) pool_ = std::make_shared<ThreadPool>(threads_, "planner");
}

void TableRunner::ForEachTable(uint32_t num_tables, const std::function<void(uint32_t)>& fn) const {
  if (order_.size() != num_tables) {
    ForEach(num_tables, fn);
    return;
  }
  ForEach(num_tables, [&](uint32_t k) { fn(order_[k]); });
}

void TableRunner::ForEach(uint32_t n, const std::function<void(uint32_t)>& fn) const {
  if (threads_ <= 1) {
    for (uint32_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // One share per thread (the pool has threads_ of them); each takes the
  // next item not yet taken, so a large item does not hold up a share's queue.
  pool_->ForEachItem(n, threads_, [&](size_t i) { fn(static_cast<uint32_t>(i)); });
}

void TableRunner::Beside(const std::function<void()>& serial, const SideWork& side) const {
  if (threads_ <= 1 || side.items == 0) {
    serial();
    for (uint32_t i = 0; i < side.items; ++i) side.fn(i);
    return;
  }
  // One chunk per thread; the first runs on the caller (ParallelFor's
  // contract), which runs serial() before it joins in.
  std::atomic<uint32_t> next{0};
  pool_->ParallelFor(threads_, 1, [&](size_t begin, size_t) {
    if (begin == 0) serial();
    for (uint32_t i = next.fetch_add(1); i < side.items; i = next.fetch_add(1)) side.fn(i);
  });
}

absl::Status TableRunner::ForEachTableStatus(
    uint32_t num_tables, const std::function<absl::Status(uint32_t)>& fn) const {
  std::vector<absl::Status> status(num_tables);
  ForEachTable(num_tables, [&](uint32_t t) { status[t] = fn(t); });
  for (absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace herald::scheduler
