#include "common/router.h"

#include "absl/strings/str_cat.h"
#include "common/rng.h"

namespace herald {

PartitionId PartitionOf(TableId table, Key key) {
  uint64_t h = Mix64(key ^ Mix64(0x68657261ull + table.value()));
  return PartitionId(static_cast<uint32_t>(h % kNumVirtualPartitions));
}

absl::StatusOr<KeyRouter> KeyRouter::Create(uint32_t num_shards) {
  if (num_shards == 0 || num_shards > kNumVirtualPartitions) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_shards must be in [1, ", kNumVirtualPartitions, "], got ", num_shards));
  }
  std::vector<uint32_t> map(kNumVirtualPartitions);
  for (uint32_t p = 0; p < kNumVirtualPartitions; ++p) {
    map[p] = static_cast<uint32_t>(static_cast<uint64_t>(p) * num_shards / kNumVirtualPartitions);
  }
  return KeyRouter(std::move(map), num_shards);
}

absl::StatusOr<KeyRouter> KeyRouter::FromPartitionMap(std::vector<uint32_t> map,
                                                      uint32_t num_shards) {
  if (map.size() != kNumVirtualPartitions) {
    return absl::InvalidArgumentError(
        absl::StrCat("partition map has ", map.size(), " entries, want ", kNumVirtualPartitions));
  }
  std::vector<bool> used(num_shards, false);
  for (uint32_t p = 0; p < map.size(); ++p) {
    if (map[p] >= num_shards) {
      return absl::InvalidArgumentError(
          absl::StrCat("partition ", p, " maps to shard ", map[p], " >= num_shards ", num_shards));
    }
    used[map[p]] = true;
  }
  for (uint32_t s = 0; s < num_shards; ++s) {
    if (!used[s])
      return absl::InvalidArgumentError(absl::StrCat("shard ", s, " owns no partition"));
  }
  return KeyRouter(std::move(map), num_shards);
}

}  // namespace herald
