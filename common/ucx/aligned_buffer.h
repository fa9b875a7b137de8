#pragma once
// A byte buffer whose start is 8-byte aligned, so a received message can be
// read in place as keys (uint64), floats and versions (spans, no copy).
// Buffers of BufferPool::kMinPooledBytes and more take their memory from
// the process's BufferPool and give it back when destroyed. Move-only.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "common/ucx/buffer_pool.h"

namespace herald::ucx {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes)
      : capacity_(BufferPool::CapacityFor(bytes)),
        words_(capacity_ >= BufferPool::kMinPooledBytes
                   ? BufferPool::Shared().Take(bytes)
                   : new uint64_t[(bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t)]),
        size_(bytes) {}
  ~AlignedBuffer() { Release(); }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : capacity_(std::exchange(other.capacity_, 0)),
        words_(std::exchange(other.words_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      capacity_ = std::exchange(other.capacity_, 0);
      words_ = std::exchange(other.words_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  char* data() { return reinterpret_cast<char*>(words_); }
  const char* data() const { return reinterpret_cast<const char*>(words_); }
  size_t size() const { return size_; }
  // Shrinks the visible size (the memory stays).
  void Truncate(size_t bytes) {
    if (bytes < size_) size_ = bytes;
  }
  static AlignedBuffer CopyOf(const void* bytes, size_t n) {
    AlignedBuffer b(n);
    if (n > 0) std::memcpy(b.data(), bytes, n);
    return b;
  }

 private:
  void Release() {
    if (words_ == nullptr) return;
    if (capacity_ >= BufferPool::kMinPooledBytes) {
      BufferPool::Shared().Give(words_, capacity_);
    } else {
      delete[] words_;
    }
    words_ = nullptr;
  }

  size_t capacity_ = 0;  // bytes; pooled from BufferPool::kMinPooledBytes
  uint64_t* words_ = nullptr;
  size_t size_ = 0;
};

}  // namespace herald::ucx
