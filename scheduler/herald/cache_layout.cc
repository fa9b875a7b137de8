#include "scheduler/herald/cache_layout.h"

namespace herald::scheduler {

CacheLayout::CacheLayout(uint32_t slots, EvictionKind eviction)
    : key_at_(slots, 0), row_at_(slots, 0), occupied_(slots, false), order_(MakeEvictionOrder(eviction, slots)) {
  free_.reserve(slots);
  for (uint32_t s = slots; s > 0; --s) free_.push_back(s - 1);
}

CacheLayout::CacheLayout(const CacheLayout& other)
    : key_at_(other.key_at_),
      row_at_(other.row_at_),
      occupied_(other.occupied_),
      free_(other.free_),
      order_(other.order_->Clone()) {}

CacheLayout& CacheLayout::operator=(const CacheLayout& other) {
  if (this != &other) *this = CacheLayout(other);
  return *this;
}

uint32_t CacheLayout::Insert(Key key, uint32_t row, uint64_t iteration) {
  const uint32_t slot = free_.back();
  free_.pop_back();
  key_at_[slot] = key;
  row_at_[slot] = row;
  occupied_[slot] = true;
  order_->Use(slot, iteration);
  return slot;
}

void CacheLayout::Remove(uint32_t slot) {
  occupied_[slot] = false;
  order_->Remove(slot);
  free_.push_back(slot);
}

}  // namespace herald::scheduler
