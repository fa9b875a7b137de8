// CacheLayout hands out slots deterministically (the most recently freed
// first, else the lowest never used), so the same job plans the same slots,
// and keeps its resident set and counts exact through inserts and removals.

#include "scheduler/planner/cache_layout.h"

#include <vector>

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

std::vector<uint32_t> Resident(const CacheLayout& cache) {
  std::vector<uint32_t> slots;
  cache.ForEachResident([&](uint32_t slot) { slots.push_back(slot); });
  return slots;
}

TEST(CacheLayout, FreedSlotsComeBackLastFreedFirstThenNeverUsedOnes) {
  CacheLayout cache(4, EvictionKind::kLru);
  EXPECT_EQ(cache.slots(), 4u);
  EXPECT_EQ(cache.resident(), 0u);
  EXPECT_EQ(cache.Insert(/*row=*/70, /*iteration=*/0), 0u);
  EXPECT_EQ(cache.Insert(71, 0), 1u);
  EXPECT_EQ(cache.Insert(72, 0), 2u);
  cache.Remove(0);
  cache.Remove(2);
  EXPECT_EQ(cache.resident(), 1u);
  EXPECT_EQ(Resident(cache), std::vector<uint32_t>({1}));
  EXPECT_EQ(cache.Insert(73, 1), 2u);  // the last freed
  EXPECT_EQ(cache.Insert(74, 1), 0u);
  EXPECT_EQ(cache.Insert(75, 1), 3u);  // then the never-used one
  EXPECT_FALSE(cache.HasFree());
  EXPECT_EQ(cache.resident(), 4u);
  EXPECT_EQ(Resident(cache), std::vector<uint32_t>({0, 1, 2, 3}));
  EXPECT_EQ(cache.RowAt(0), 74u);
  EXPECT_EQ(cache.RowAt(2), 73u);
  EXPECT_EQ(cache.RowAt(3), 75u);
  // A copy keeps the state and the order: the same next victims.
  CacheLayout copy(cache);
  std::vector<uint32_t> victims, copy_victims;
  cache.Victims(2, 4, &victims);
  copy.Victims(2, 4, &copy_victims);
  EXPECT_EQ(victims, std::vector<uint32_t>({1, 2, 0, 3}));
  EXPECT_EQ(copy_victims, victims);
  cache.Remove(3);
  EXPECT_TRUE(cache.HasFree());
  EXPECT_EQ(copy.resident(), 4u);  // independent of the original
}

}  // namespace
}  // namespace herald::scheduler
