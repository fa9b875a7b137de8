#pragma once
// Key router: (table, key) -> virtual partition (fixed count) -> PS shard.
// The hash is fixed forever (it decides where rows live in checkpoints), so
// it is written out here rather than taken from std::hash or absl::Hash.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"

namespace herald {

// Number of virtual partitions. Shards own contiguous partition ranges, so a
// cluster can grow to this many shards by moving partitions.
inline constexpr uint32_t kNumVirtualPartitions = 4096;

// Virtual partition of a key; identical on every process and version.
PartitionId PartitionOf(TableId table, Key key);

// Immutable after construction; thread-safe.
class KeyRouter {
 public:
  // Even split: partition p goes to shard p * num_shards / kNumVirtualPartitions.
  // Errors: InvalidArgument if num_shards is 0 or above kNumVirtualPartitions.
  static absl::StatusOr<KeyRouter> Create(uint32_t num_shards);

  // Explicit map (index = partition). Errors: InvalidArgument if the map does
  // not have kNumVirtualPartitions entries or leaves a shard without partitions.
  static absl::StatusOr<KeyRouter> FromPartitionMap(std::vector<uint32_t> partition_to_shard,
                                                    uint32_t num_shards);

  uint32_t num_shards() const { return num_shards_; }
  ShardId ShardOf(TableId table, Key key) const {
    return ShardId(partition_to_shard_[PartitionOf(table, key).value()]);
  }
  ShardId ShardOfPartition(PartitionId p) const { return ShardId(partition_to_shard_[p.value()]); }

 private:
  KeyRouter(std::vector<uint32_t> map, uint32_t num_shards)
      : partition_to_shard_(std::move(map)), num_shards_(num_shards) {}
  std::vector<uint32_t> partition_to_shard_;
  uint32_t num_shards_;
};

}  // namespace herald
