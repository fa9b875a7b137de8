#include "common/ucx/buffer_pool.h"

#include <cstring>

#include "common/ucx/aligned_buffer.h"
#include "gtest/gtest.h"

namespace herald::ucx {
namespace {

TEST(BufferPoolTest, SizesRoundUpToPowersOfTwoFromTheSmallestPooled) {
  EXPECT_EQ(BufferPool::CapacityFor(100), 100u);  // not pooled
  EXPECT_EQ(BufferPool::CapacityFor(BufferPool::kMinPooledBytes), BufferPool::kMinPooledBytes);
  EXPECT_EQ(BufferPool::CapacityFor(BufferPool::kMinPooledBytes + 1),
            2 * BufferPool::kMinPooledBytes);
  EXPECT_EQ(BufferPool::CapacityFor(3 << 20), size_t{4} << 20);
}

TEST(BufferPoolTest, AGivenBackBlockServesTheNextRequestOfItsSizeClass) {
  BufferPool pool(size_t{8} << 20);
  uint64_t* a = pool.Take(100'000);  // 128 KiB class
  a[0] = 42;
  pool.Give(a, BufferPool::CapacityFor(100'000));
  EXPECT_EQ(pool.stats().cached_bytes, size_t{128} << 10);
  uint64_t* b = pool.Take(70'000);  // same class
  EXPECT_EQ(b, a);
  uint64_t* c = pool.Take(300'000);  // another class: a new block
  EXPECT_NE(c, a);
  const BufferPool::Stats s = pool.stats();
  EXPECT_EQ(s.reused, 1u);
  EXPECT_EQ(s.allocated, 2u);
  EXPECT_EQ(s.cached_bytes, 0u);
  pool.Give(b, size_t{128} << 10);
  pool.Give(c, size_t{512} << 10);
}

TEST(BufferPoolTest, BlocksBeyondTheBoundAreFreed) {
  BufferPool pool(size_t{1} << 20);  // room for one 1 MiB block
  uint64_t* a = pool.Take(size_t{1} << 20);
  uint64_t* b = pool.Take(size_t{1} << 20);
  pool.Give(a, size_t{1} << 20);
  pool.Give(b, size_t{1} << 20);
  const BufferPool::Stats s = pool.stats();
  EXPECT_EQ(s.cached_bytes, size_t{1} << 20);
  EXPECT_EQ(s.freed, 1u);
}

TEST(BufferPoolTest, LargeAlignedBuffersComeFromTheSharedPoolAndGoBack) {
  const BufferPool::Stats before = BufferPool::Shared().stats();
  const char* first;
  {
    AlignedBuffer a(1 << 20);
    first = a.data();
    std::memset(a.data(), 7, a.size());
    AlignedBuffer moved = std::move(a);  // the block moves, nothing is given back twice
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(moved.data(), first);
  }
  AlignedBuffer again(900'000);  // same 1 MiB class
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(BufferPool::Shared().stats().reused, before.reused + 1);
  AlignedBuffer small(1000);  // not pooled
  EXPECT_EQ(BufferPool::Shared().stats().allocated, before.allocated + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % sizeof(uint64_t), 0u);
}

}  // namespace
}  // namespace herald::ucx
