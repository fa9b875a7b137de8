#include "ps_server/store/slab_array.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "ps_server/store/mapped_slab.h"

namespace herald::ps {
namespace {

TEST(SlabArray, NewItemsAreZeroAndPointersStayValidAcrossSlabs) {
  SlabArray<float> a(/*width=*/3, /*items_per_slab=*/100);
  std::vector<float*> items;
  for (int i = 0; i < 350; ++i) {
    const uint64_t index = a.Append();
    ASSERT_EQ(index, static_cast<uint64_t>(i));
    float* item = a.Item(index);
    for (int j = 0; j < 3; ++j) ASSERT_EQ(item[j], 0.0f) << "item " << i;
    item[0] = static_cast<float>(i);
    item[2] = -static_cast<float>(i);
    items.push_back(item);
  }
  for (int i = 0; i < 350; ++i) {
    EXPECT_EQ(a.Item(i), items[i]);  // never moved by later appends
    EXPECT_EQ(items[i][0], static_cast<float>(i));
    EXPECT_EQ(items[i][2], -static_cast<float>(i));
  }
  EXPECT_EQ(a.size(), 350u);
}

TEST(SlabArray, AccountsTheFirstSlabByDoublingCapacityThenWholeSlabs) {
  SlabArray<uint64_t> a(/*width=*/2, /*items_per_slab=*/1000);
  a.Append();
  EXPECT_EQ(a.AllocatedBytes(), 16u * 2 * 8);
  for (int i = 1; i < 17; ++i) a.Append();
  EXPECT_EQ(a.AllocatedBytes(), 32u * 2 * 8);
  for (int i = 17; i < 1001; ++i) a.Append();
  EXPECT_EQ(a.AllocatedBytes(), 2000u * 2 * 8);
}

TEST(MappedSlab, LargeSlabIsZeroAndMovable) {
  constexpr size_t kBytes = size_t{9} << 20;
  MappedSlab slab(kBytes, kBytes);
  ASSERT_NE(slab.data(), nullptr);
  auto* bytes = static_cast<unsigned char*>(slab.data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[kBytes - 1], 0);
  bytes[kBytes - 1] = 7;
  MappedSlab moved(std::move(slab));
  EXPECT_EQ(slab.data(), nullptr);
  EXPECT_EQ(static_cast<unsigned char*>(moved.data())[kBytes - 1], 7);
  MappedSlab small(100, 100);
  small = std::move(moved);
  EXPECT_EQ(small.bytes(), kBytes);
}

TEST(MappedSlab, GrowsItsAccessiblePrefixInPlace) {
  MappedSlab slab(size_t{1} << 20, 10);
  EXPECT_EQ(slab.accessible(), 4096u);  // whole pages
  auto* bytes = static_cast<unsigned char*>(slab.data());
  bytes[4095] = 3;
  slab.MakeAccessible(100000);
  EXPECT_EQ(slab.accessible(), 102400u);
  EXPECT_EQ(bytes[4095], 3);
  EXPECT_EQ(bytes[100000], 0);
  slab.MakeAccessible(size_t{2} << 20);  // capped at the slab
  EXPECT_EQ(slab.accessible(), size_t{1} << 20);
  bytes[(size_t{1} << 20) - 1] = 5;
}

}  // namespace
}  // namespace herald::ps
