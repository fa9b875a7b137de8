#include "common/router.h"

#include <vector>

#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(PartitionOf, IsStableAcrossReleases) {
  // These values are part of the on-disk contract (checkpoints are sharded by
  // partition). If this test fails, the router hash changed: do not ship it.
  EXPECT_EQ(PartitionOf(TableId(0), 0).value(), PartitionOf(TableId(0), 0).value());
  const uint32_t golden[] = {PartitionOf(TableId(0), 1).value(), PartitionOf(TableId(1), 1).value(),
                             PartitionOf(TableId(0), 0xdeadbeef).value()};
  EXPECT_EQ(golden[0], 1413u);
  EXPECT_EQ(golden[1], 2653u);
  EXPECT_EQ(golden[2], 1609u);
}

TEST(KeyRouter, SpreadsKeysEvenlyOverShards) {
  auto router = KeyRouter::Create(4);
  ASSERT_TRUE(router.ok());
  std::vector<int> per_shard(4, 0);
  const int n = 400000;
  for (int k = 0; k < n; ++k) per_shard[router->ShardOf(TableId(k % 26), k).value()]++;
  for (int c : per_shard) EXPECT_NEAR(c, n / 4, n / 4 * 0.03);
}

TEST(KeyRouter, SameKeyDifferentTablesMayLandOnDifferentShards) {
  auto router = KeyRouter::Create(8);
  ASSERT_TRUE(router.ok());
  int differ = 0;
  for (uint64_t k = 0; k < 1000; ++k) {
    differ += router->ShardOf(TableId(0), k) != router->ShardOf(TableId(1), k);
  }
  EXPECT_GT(differ, 800);
}

TEST(KeyRouter, RejectsBadShardCountsAndMaps) {
  EXPECT_EQ(KeyRouter::Create(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(KeyRouter::Create(kNumVirtualPartitions + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<uint32_t> map(kNumVirtualPartitions, 0);
  auto no_shard1 = KeyRouter::FromPartitionMap(map, 2);
  EXPECT_EQ(no_shard1.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(no_shard1.status().message().find("shard 1 owns no partition"), std::string::npos);
  map.back() = 1;
  EXPECT_TRUE(KeyRouter::FromPartitionMap(map, 2).ok());
  map.back() = 5;
  EXPECT_FALSE(KeyRouter::FromPartitionMap(map, 2).ok());
}

TEST(KeyRouter, EvenSplitGivesContiguousRanges) {
  auto router = KeyRouter::Create(3);
  ASSERT_TRUE(router.ok());
  uint32_t prev = 0;
  for (uint32_t p = 0; p < kNumVirtualPartitions; ++p) {
    uint32_t s = router->ShardOfPartition(PartitionId(p)).value();
    EXPECT_GE(s, prev);
    prev = s;
  }
  EXPECT_EQ(prev, 2u);
}

}  // namespace
}  // namespace herald
