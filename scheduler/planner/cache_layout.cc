#include "scheduler/planner/cache_layout.h"

namespace herald::scheduler {

CacheLayout::CacheLayout(uint32_t slots, EvictionKind eviction)
    : row_at_(slots, kFree), order_(MakeEvictionOrder(eviction, slots)) {}

CacheLayout::CacheLayout(const CacheLayout& other)
    : row_at_(other.row_at_),
      freed_(other.freed_),
      never_used_(other.never_used_),
      order_(other.order_->Clone()) {}

CacheLayout& CacheLayout::operator=(const CacheLayout& other) {
  if (this != &other) *this = CacheLayout(other);
  return *this;
}

uint32_t CacheLayout::Insert(uint32_t row, uint64_t iteration) {
  uint32_t slot;
  if (freed_.empty()) {
    slot = never_used_++;
  } else {
    slot = freed_.back();
    freed_.pop_back();
  }
  row_at_[slot] = row;
  order_->Use(slot, iteration);
  return slot;
}

void CacheLayout::Remove(uint32_t slot) {
  row_at_[slot] = kFree;
  order_->Remove(slot);
  freed_.push_back(slot);
}

}  // namespace herald::scheduler
