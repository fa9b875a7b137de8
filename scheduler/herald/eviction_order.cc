#include "scheduler/herald/eviction_order.h"

#include "absl/strings/str_cat.h"

namespace herald::scheduler {

absl::StatusOr<EvictionKind> ParseEvictionKind(const std::string& name) {
  if (name == "lru") return EvictionKind::kLru;
  if (name == "lfu") return EvictionKind::kLfu;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown eviction '", name, "' (want lru or lfu)"));
}

const char* EvictionKindName(EvictionKind kind) {
  return kind == EvictionKind::kLru ? "lru" : "lfu";
}

std::unique_ptr<EvictionOrder> MakeEvictionOrder(EvictionKind kind, uint32_t slots) {
  if (kind == EvictionKind::kLfu) return std::make_unique<LfuOrder>(slots);
  return std::make_unique<LruOrder>(slots);
}

LruOrder::LruOrder(uint32_t slots, uint32_t renumber_at)
    : latest_(slots, 0), renumber_at_(renumber_at) {}

void LruOrder::Use(uint32_t slot, uint64_t iteration) {
  if (iteration != iteration_) {
    iteration_ = iteration;
    first_use_of_iteration_ = uses_ + 1;
  }
  latest_[slot] = ++uses_;
  queue_.push_back({slot, uses_});
  if (queue_.size() - head_ > 2 * latest_.size() + 64 || uses_ >= renumber_at_) Compact();
}

void LruOrder::Remove(uint32_t slot) { latest_[slot] = 0; }

void LruOrder::Compact() {
  uint32_t out = 0;
  uint32_t first_now = 0;  // the renumbered first use of iteration_, once seen
  for (size_t i = head_; i < queue_.size(); ++i) {
    const Entry e = queue_[i];
    if (latest_[e.slot] != e.use) continue;
    if (first_now == 0 && e.use >= first_use_of_iteration_) first_now = out + 1;
    ++out;
    latest_[e.slot] = out;  // the slot's only live entry: no later one reads it
    queue_[out - 1] = {e.slot, out};
  }
  first_use_of_iteration_ = first_now == 0 ? out + 1 : first_now;
  uses_ = out;
  queue_.resize(out);
  head_ = 0;
}

void LruOrder::DropDeadFront() const {
  while (head_ < queue_.size() && latest_[queue_[head_].slot] != queue_[head_].use) {
    ++head_;
  }
  if (head_ > 4096 && head_ * 2 > queue_.size()) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
}

int64_t LruOrder::Coldest(uint64_t iteration) const {
  DropDeadFront();
  if (head_ == queue_.size()) return -1;
  // Every slot used at `iteration` is nearer the back than any other.
  const Entry& oldest = queue_[head_];
  return UsedAt(oldest.use, iteration) ? -1 : static_cast<int64_t>(oldest.slot);
}

void LruOrder::ColdestN(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const {
  // Live entries are each slot's latest use, so no slot appears twice; the
  // first slot used at `iteration` ends the list (all after it were too).
  // The entries of slots evicted since the last call are dead now: skip
  // them once here, not on every later call.
  DropDeadFront();
  for (size_t i = head_; i < queue_.size() && n > 0; ++i) {
    if (latest_[queue_[i].slot] != queue_[i].use) continue;
    if (UsedAt(queue_[i].use, iteration)) break;
    out->push_back(queue_[i].slot);
    --n;
  }
}

LfuOrder::LfuOrder(uint32_t slots) : uses_(slots, 0), last_use_(slots, 0), tracked_(slots, false) {}

void LfuOrder::Use(uint32_t slot, uint64_t iteration) {
  if (tracked_[slot]) order_.erase(Entry{uses_[slot], last_use_[slot], slot});
  ++uses_[slot];
  last_use_[slot] = iteration;
  tracked_[slot] = true;
  order_.insert(Entry{uses_[slot], last_use_[slot], slot});
}

void LfuOrder::Remove(uint32_t slot) {
  if (!tracked_[slot]) return;
  order_.erase(Entry{uses_[slot], last_use_[slot], slot});
  tracked_[slot] = false;
  uses_[slot] = 0;
}

int64_t LfuOrder::Coldest(uint64_t iteration) const {
  for (const Entry& e : order_) {
    if (std::get<1>(e) != iteration) return std::get<2>(e);
  }
  return -1;
}

void LfuOrder::ColdestN(uint64_t iteration, size_t n, std::vector<uint32_t>* out) const {
  for (const Entry& e : order_) {
    if (n == 0) return;
    if (std::get<1>(e) == iteration) continue;
    out->push_back(std::get<2>(e));
    --n;
  }
}

}  // namespace herald::scheduler
