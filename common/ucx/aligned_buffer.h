#pragma once
// A byte buffer whose start is 8-byte aligned, so a received message can be
// read in place as keys (uint64), floats and versions (spans, no copy).
// Move-only.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace herald::ucx {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) : words_(new uint64_t[(bytes + 7) / 8]), size_(bytes) {}

  char* data() { return reinterpret_cast<char*>(words_.get()); }
  const char* data() const { return reinterpret_cast<const char*>(words_.get()); }
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
  std::unique_ptr<uint64_t[]> words_;
  size_t size_ = 0;
};

}  // namespace herald::ucx
