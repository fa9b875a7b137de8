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

LruOrder::LruOrder(uint32_t slots)
    : prev_(slots, kNone), next_(slots, kNone), last_use_(slots, 0), linked_(slots, false) {}

void LruOrder::Unlink(uint32_t slot) {
  if (!linked_[slot]) return;
  const uint32_t p = prev_[slot], n = next_[slot];
  (p == kNone ? head_ : next_[p]) = n;
  (n == kNone ? tail_ : prev_[n]) = p;
  linked_[slot] = false;
}

void LruOrder::Use(uint32_t slot, uint64_t iteration) {
  Unlink(slot);
  prev_[slot] = kNone;
  next_[slot] = head_;
  if (head_ != kNone) prev_[head_] = slot;
  head_ = slot;
  if (tail_ == kNone) tail_ = slot;
  linked_[slot] = true;
  last_use_[slot] = iteration;
}

void LruOrder::Remove(uint32_t slot) { Unlink(slot); }

int64_t LruOrder::Coldest(uint64_t iteration) const {
  // Every slot used at `iteration` is nearer the head than any other.
  if (tail_ == kNone || last_use_[tail_] == iteration) return -1;
  return tail_;
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

}  // namespace herald::scheduler
