#include "ps_server/store/mapped_slab.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace herald::ps {
namespace {

constexpr size_t kPage = 4096;

[[noreturn]] void MapFailed(const char* call, size_t bytes) {
  std::fprintf(stderr, "MappedSlab: %s of %zu bytes failed: %s\n", call, bytes,
               std::strerror(errno));
  std::abort();
}

}  // namespace

MappedSlab::MappedSlab(size_t bytes, size_t accessible) : bytes_(bytes) {
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  data_ = mmap(nullptr, bytes, PROT_NONE, kFlags, -1, 0);
  if (data_ == MAP_FAILED) MapFailed("mmap", bytes);
  MakeAccessible(accessible);
}

void MappedSlab::MakeAccessible(size_t bytes) {
  if (bytes <= accessible_) return;
  const size_t want = std::min(bytes_, (bytes + kPage - 1) / kPage * kPage);
  if (mprotect(static_cast<char*>(data_) + accessible_, want - accessible_,
               PROT_READ | PROT_WRITE) != 0) {
    MapFailed("mprotect", want);
  }
  accessible_ = want;
}

MappedSlab::~MappedSlab() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

MappedSlab::MappedSlab(MappedSlab&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      accessible_(std::exchange(other.accessible_, 0)) {}

MappedSlab& MappedSlab::operator=(MappedSlab&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    accessible_ = std::exchange(other.accessible_, 0);
  }
  return *this;
}

}  // namespace herald::ps
