#pragma once
// A fixed-size block of anonymous memory for a SlabArray slab: it reads as
// zero bytes, takes memory only for the pages written, and is unmapped when
// destroyed. A slab larger than 4 MiB is mapped on a 2 MiB boundary and the
// part past its first 2 MiB is advised for transparent huge pages, so that
// filling a large slab costs one page fault per 2 MiB rather than per 4 KiB,
// while a table that only ever writes a few rows still takes small pages.

#include <cstddef>

namespace herald::ps {

class MappedSlab {
 public:
  // Maps `bytes` (> 0). Aborts, naming the size, if the map fails.
  explicit MappedSlab(size_t bytes);
  ~MappedSlab();
  MappedSlab(MappedSlab&& other) noexcept;
  MappedSlab& operator=(MappedSlab&& other) noexcept;
  MappedSlab(const MappedSlab&) = delete;
  MappedSlab& operator=(const MappedSlab&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace herald::ps
