#include "ps_server/store/embedding_table.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/rng.h"

namespace herald::ps {

EmbeddingTable::EmbeddingTable(TableOptions options)
    : options_(options),
      row_floats_(math::RowFloats(options.optimizer.kind, options.dim)),
      init_scale_(options.init_scale > 0 ? options.init_scale
                                         : 1.0f / std::sqrt(static_cast<float>(options.dim))) {
  options_.rows_per_slab = std::max<uint32_t>(options_.rows_per_slab, 1);
}

std::optional<uint32_t> EmbeddingTable::Find(Key key) const {
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<uint32_t> EmbeddingTable::FindOrCreate(Key key) {
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const uint64_t n = versions_.size();
  if ((options_.max_rows > 0 && n >= options_.max_rows) || n >= UINT32_MAX) {
    return absl::ResourceExhaustedError(
        absl::StrCat("table ", options_.id.value(), " is full: ", n, " rows (max_rows ",
                     options_.max_rows, ")"));
  }
  const uint32_t index = static_cast<uint32_t>(n);
  if (index % options_.rows_per_slab == 0) {
    slabs_.push_back(std::make_unique<float[]>(static_cast<size_t>(options_.rows_per_slab) *
                                               row_floats_));
  }
  versions_.push_back(0);
  index_.emplace(key, index);
  float* row = Row(index);
  InitEmbeddingRow(options_.seed, options_.id.value(), key, init_scale_, row, options_.dim);
  math::InitOptimizerState(options_.optimizer, options_.dim, row + options_.dim);
  return index;
}

uint64_t EmbeddingTable::MemoryBytes() const {
  const uint64_t slab_bytes =
      slabs_.size() * static_cast<uint64_t>(options_.rows_per_slab) * row_floats_ * sizeof(float);
  const uint64_t version_bytes = versions_.capacity() * sizeof(uint64_t);
  // flat_hash_map: one slot (key, index) and one control byte per bucket.
  const uint64_t index_bytes =
      index_.bucket_count() * (sizeof(std::pair<Key, uint32_t>) + 1);
  return slab_bytes + version_bytes + index_bytes;
}

}  // namespace herald::ps
