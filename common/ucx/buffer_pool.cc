#include "common/ucx/buffer_pool.h"

#include "absl/numeric/bits.h"
#include "common/tunables.h"

namespace herald::ucx {

BufferPool::~BufferPool() {
  absl::MutexLock lock(&mu_);
  for (auto& blocks : free_) {
    for (uint64_t* b : blocks) delete[] b;
  }
}

BufferPool& BufferPool::Shared() {
  static BufferPool* pool = new BufferPool(tunables::kUcxBufferPoolBytes);
  return *pool;
}

size_t BufferPool::CapacityFor(size_t bytes) {
  if (bytes < kMinPooledBytes) return bytes;
  return absl::bit_ceil(bytes);
}

uint64_t* BufferPool::Take(size_t bytes) {
  const size_t capacity = CapacityFor(bytes);
  const size_t size_class = absl::countr_zero(capacity);
  {
    absl::MutexLock lock(&mu_);
    if (size_class < free_.size() && !free_[size_class].empty()) {
      uint64_t* block = free_[size_class].back();
      free_[size_class].pop_back();
      stats_.cached_bytes -= capacity;
      ++stats_.reused;
      return block;
    }
    ++stats_.allocated;
  }
  return new uint64_t[capacity / sizeof(uint64_t)];
}

void BufferPool::Give(uint64_t* block, size_t capacity) {
  {
    absl::MutexLock lock(&mu_);
    if (stats_.cached_bytes + capacity <= max_cached_bytes_) {
      const size_t size_class = absl::countr_zero(capacity);
      if (free_.size() <= size_class) free_.resize(size_class + 1);
      free_[size_class].push_back(block);
      stats_.cached_bytes += capacity;
      return;
    }
    ++stats_.freed;
  }
  delete[] block;
}

BufferPool::Stats BufferPool::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace herald::ucx
