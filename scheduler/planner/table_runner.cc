#include "scheduler/planner/table_runner.h"

#include <algorithm>
#include <vector>

namespace herald::scheduler {

TableRunner::TableRunner(uint32_t threads) : threads_(std::max<uint32_t>(threads, 1)) {
  // Every table runs on the pool; the caller waits (ForEachItemOnPool).
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
  // One share per pool thread; each takes the next item not yet taken, so a
  // large item does not hold up a share's queue. The caller does not take
  // items: it is the planner's serial thread, and on a machine whose cores
  // are busy it would otherwise take most tables before the woken pool
  // threads get a core, so its CPU time would measure table work, not the
  // serial steps that bound a node with free cores.
  pool_->ForEachItemOnPool(n, threads_, [&](size_t i) { fn(static_cast<uint32_t>(i)); });
}

void TableRunner::Beside(const std::function<void()>& serial, const SideWork& side) const {
  if (threads_ <= 1 || side.items == 0) {
    serial();
    for (uint32_t i = 0; i < side.items; ++i) side.fn(i);
    return;
  }
  // The pool takes the items while the caller runs serial(), then waits.
  pool_->ForEachItemOnPool(
      side.items, threads_, [&](size_t i) { side.fn(static_cast<uint32_t>(i)); }, serial);
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
