#pragma once
// A fixed-size block of anonymous memory for a SlabArray slab: it reads as
// zero bytes, takes memory only for the pages written, and is unmapped when
// destroyed. Only its first accessible() bytes may be touched: the rest is
// reserved address space without access, which the kernel does not count
// as committed memory (so a strict overcommit policy sees only what the
// slab has grown to), and MakeAccessible extends the prefix in place.
// Small pages only: huge pages (MADV_HUGEPAGE past the first 2 MiB) made a
// shard's steady state 1.4-1.5x slower on the development VM
// (benchmarks-log.md, "Pipeline").

#include <cstddef>

namespace herald::ps {

class MappedSlab {
 public:
  // Maps `bytes` (> 0), the first `accessible` of them accessible. Aborts,
  // naming the size, if the map fails.
  MappedSlab(size_t bytes, size_t accessible);
  ~MappedSlab();
  MappedSlab(MappedSlab&& other) noexcept;
  MappedSlab& operator=(MappedSlab&& other) noexcept;
  MappedSlab(const MappedSlab&) = delete;
  MappedSlab& operator=(const MappedSlab&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  size_t accessible() const { return accessible_; }
  // At least the first `bytes` (≤ bytes()) accessible; what was written
  // stays where it is. Aborts if the kernel refuses the memory.
  void MakeAccessible(size_t bytes);

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t accessible_ = 0;  // whole pages
};

}  // namespace herald::ps
