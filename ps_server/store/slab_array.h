#pragma once
// An append-only array of fixed-width items stored in large slabs, so that
// growing never copies more than one small slab and never allocates per item.
//
// Item i is `width` consecutive T at Item(i). Slabs hold `items_per_slab`
// items; only the first slab grows (doubling from a small size) before it
// reaches full size, so a small table does not pay for a whole slab. Pointers
// returned by Item() are invalidated by Append() while the first slab grows
// (the owner holds no pointer across an Append).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace herald::ps {

template <typename T>
class SlabArray {
 public:
  // REQUIRES: width >= 1, items_per_slab >= 1.
  SlabArray(uint32_t width, uint32_t items_per_slab)
      : width_(width), items_per_slab_(std::max<uint32_t>(items_per_slab, 1)) {}

  uint64_t size() const { return size_; }
  uint32_t width() const { return width_; }

  T* Item(uint64_t i) { return slabs_[i / items_per_slab_].get() + (i % items_per_slab_) * width_; }
  const T* Item(uint64_t i) const { return const_cast<SlabArray*>(this)->Item(i); }

  // Appends one zero-initialised item and returns its index.
  uint64_t Append() {
    const uint64_t i = size_;
    if (i < items_per_slab_) {
      if (i == first_slab_capacity_) GrowFirstSlab();
    } else if (i % items_per_slab_ == 0) {
      slabs_.push_back(std::make_unique<T[]>(static_cast<size_t>(items_per_slab_) * width_));
    }
    ++size_;
    return i;
  }

  // Bytes of all allocated slabs (the full capacity, used or not).
  uint64_t AllocatedBytes() const {
    const uint64_t full = slabs_.empty() ? 0 : slabs_.size() - 1;
    return (full * items_per_slab_ + first_slab_capacity_) * width_ * sizeof(T);
  }

 private:
  static constexpr uint32_t kFirstSlabMinItems = 16;

  void GrowFirstSlab() {
    const uint32_t capacity = std::min<uint64_t>(
        items_per_slab_, std::max<uint64_t>(kFirstSlabMinItems, 2ull * first_slab_capacity_));
    auto slab = std::make_unique<T[]>(static_cast<size_t>(capacity) * width_);
    if (!slabs_.empty()) {
      std::memcpy(slab.get(), slabs_[0].get(),
                  static_cast<size_t>(first_slab_capacity_) * width_ * sizeof(T));
      slabs_[0] = std::move(slab);
    } else {
      slabs_.push_back(std::move(slab));
    }
    first_slab_capacity_ = capacity;
  }

  uint32_t width_;
  uint32_t items_per_slab_;
  uint64_t size_ = 0;
  uint32_t first_slab_capacity_ = 0;  // items in slabs_[0]
  std::vector<std::unique_ptr<T[]>> slabs_;
};

}  // namespace herald::ps
