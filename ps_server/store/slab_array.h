#pragma once
// An append-only array of fixed-width items stored in large slabs, so that
// growing never copies and never allocates per item.
//
// Item i is `width` consecutive T at Item(i). Every slab is an anonymous
// memory map of `items_per_slab` items (MappedSlab): its pages read as zero
// and take memory only once written, so appending touches only the pages of
// the new items and nothing is ever copied or cleared by hand. Pointers
// returned by Item() stay valid for the array's life.
//
// The first slab's capacity doubles from a small size as items arrive (the
// slab's accessible prefix grows in place), so a small table commits little;
// later slabs are whole. AllocatedBytes() is that capacity: what the array
// may have touched.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ps_server/store/mapped_slab.h"

namespace herald::ps {

template <typename T>
class SlabArray {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "items are zero bytes until written, and are never destroyed");

 public:
  // REQUIRES: width >= 1, items_per_slab >= 1.
  SlabArray(uint32_t width, uint32_t items_per_slab)
      : width_(width), items_per_slab_(std::max<uint32_t>(items_per_slab, 1)) {}

  uint64_t size() const { return size_; }
  uint32_t width() const { return width_; }

  T* Item(uint64_t i) {
    return static_cast<T*>(slabs_[i / items_per_slab_].data()) + (i % items_per_slab_) * width_;
  }
  const T* Item(uint64_t i) const { return const_cast<SlabArray*>(this)->Item(i); }

  // Appends one zero-initialised item and returns its index. Aborts if the
  // address space for a new slab cannot be mapped (as operator new would).
  uint64_t Append() {
    const uint64_t i = size_;
    const size_t item_bytes = size_t{width_} * sizeof(T);
    if (i < items_per_slab_) {
      if (i == first_slab_capacity_) {
        first_slab_capacity_ = static_cast<uint32_t>(std::min<uint64_t>(
            items_per_slab_, std::max<uint64_t>(kFirstSlabMinItems, 2ull * first_slab_capacity_)));
        if (slabs_.empty()) slabs_.emplace_back(items_per_slab_ * item_bytes, 0);
        slabs_[0].MakeAccessible(first_slab_capacity_ * item_bytes);
      }
    } else if (i % items_per_slab_ == 0) {
      slabs_.emplace_back(items_per_slab_ * item_bytes, items_per_slab_ * item_bytes);
    }
    ++size_;
    return i;
  }

  // Bytes of full slabs plus the first slab's capacity (used or not).
  uint64_t AllocatedBytes() const {
    const uint64_t full = slabs_.empty() ? 0 : slabs_.size() - 1;
    return (full * items_per_slab_ + first_slab_capacity_) * width_ * sizeof(T);
  }

 private:
  static constexpr uint32_t kFirstSlabMinItems = 16;

  uint32_t width_;
  uint32_t items_per_slab_;
  uint64_t size_ = 0;
  uint32_t first_slab_capacity_ = 0;  // items of slabs_[0] accounted for
  std::vector<MappedSlab> slabs_;
};

}  // namespace herald::ps
