#include "scheduler/planner/cache_layout.h"

#include "absl/strings/str_cat.h"

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

void CacheLayout::Save(StateWriter* out) const {
  out->Vec(row_at_);
  out->Vec(freed_);
  out->Pod(never_used_);
  order_->Save(out);
}

bool CacheLayout::Load(StateReader* in, uint32_t num_rows) {
  std::vector<uint32_t> row_at, freed;
  uint32_t never_used;
  if (!in->Vec("cache.rows", &row_at) || !in->Vec("cache.freed", &freed) ||
      !in->Pod("cache.never_used", &never_used)) {
    return false;
  }
  if (row_at.size() != row_at_.size()) {
    return in->Invalid("cache.rows",
                       absl::StrCat(row_at.size(), " slots, the cache has ", row_at_.size()));
  }
  if (never_used > row_at.size()) return in->Invalid("cache.never_used", "past the last slot");
  for (uint32_t slot : freed) {
    if (slot >= never_used || row_at[slot] != kFree) {
      return in->Invalid("cache.freed", absl::StrCat("slot ", slot, " is not a free used slot"));
    }
  }
  for (uint32_t slot = 0; slot < row_at.size(); ++slot) {
    if (row_at[slot] != kFree && (slot >= never_used || row_at[slot] >= num_rows)) {
      return in->Invalid(
          "cache.rows", absl::StrCat("slot ", slot, " holds row ", row_at[slot], " of ", num_rows));
    }
  }
  if (!order_->Load(in)) return false;
  row_at_ = std::move(row_at);
  freed_ = std::move(freed);
  never_used_ = never_used;
  return true;
}

}  // namespace herald::scheduler
