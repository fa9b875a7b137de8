#include "ps_server/store/mapped_slab.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace herald::ps {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

[[noreturn]] void MapFailed(size_t bytes) {
  std::fprintf(stderr, "MappedSlab: mmap of %zu bytes failed: %s\n", bytes, std::strerror(errno));
  std::abort();
}

}  // namespace

MappedSlab::MappedSlab(size_t bytes) : bytes_(bytes) {
  constexpr int kProt = PROT_READ | PROT_WRITE;
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  if (bytes <= 2 * kHugePage) {
    data_ = mmap(nullptr, bytes, kProt, kFlags, -1, 0);
    if (data_ == MAP_FAILED) MapFailed(bytes);
    return;
  }
  // Over-map by one huge page and trim both ends to a 2 MiB-aligned start.
  const size_t mapped = bytes + kHugePage;
  void* raw = mmap(nullptr, mapped, kProt, kFlags, -1, 0);
  if (raw == MAP_FAILED) MapFailed(mapped);
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const size_t tail = start + mapped - (aligned + bytes);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  data_ = reinterpret_cast<void*>(aligned);
  // Advice only: where huge pages are off, the slab simply keeps small pages.
  const size_t advised = (bytes - kHugePage) & ~(kHugePage - 1);
  madvise(static_cast<char*>(data_) + kHugePage, advised, MADV_HUGEPAGE);
}

MappedSlab::~MappedSlab() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

MappedSlab::MappedSlab(MappedSlab&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MappedSlab& MappedSlab::operator=(MappedSlab&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace herald::ps
