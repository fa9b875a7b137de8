#pragma once
// Message buffers reused instead of allocated for every message: a request
// received, a fetch's reply, a row exchange. Blocks of 64 KiB and more come
// in power-of-two sizes; a block given back is kept for the next message of
// its size class while the pool holds at most `max_cached_bytes` (a block
// that would exceed it is freed). So a process holds what is in flight plus
// at most that bound, and a steady stream of same-sized messages allocates
// nothing. Smaller buffers are plain allocations (malloc reuses them well).
// Thread-safe. AlignedBuffer takes its blocks from Shared().

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace herald::ucx {

class BufferPool {
 public:
  struct Stats {
    uint64_t reused = 0;     // blocks handed out from the pool
    uint64_t allocated = 0;  // blocks allocated because none of the size was free
    uint64_t freed = 0;      // blocks given back but freed (the bound was reached)
    uint64_t cached_bytes = 0;
  };
  static constexpr size_t kMinPooledBytes = size_t{64} << 10;

  explicit BufferPool(size_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // The process's pool (tunables::kUcxBufferPoolBytes), never destroyed.
  static BufferPool& Shared();

  // The bytes a block for `bytes` has: `bytes` rounded up to a power of
  // two, or `bytes` itself below kMinPooledBytes (not pooled).
  static size_t CapacityFor(size_t bytes);
  // A block of CapacityFor(bytes) bytes (bytes >= kMinPooledBytes), aligned
  // for uint64_t; its contents are whatever the last user left.
  uint64_t* Take(size_t bytes);
  // Gives back a block from Take with its capacity.
  void Give(uint64_t* block, size_t capacity);
  Stats stats() const;

 private:
  const size_t max_cached_bytes_;
  mutable absl::Mutex mu_;
  std::vector<std::vector<uint64_t*>> free_ ABSL_GUARDED_BY(mu_);  // by log2(capacity)
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::ucx
