#pragma once
// One dynamic embedding table of a parameter-server shard: 64-bit keys, rows
// created on first touch with the deterministic initializer, rows stored in
// large slabs (not one allocation per row).
//
// A row is RowFloats(optimizer, dim) floats: `dim` values then the optimizer
// state (common/math/sparse_optimizer.h), plus a version counting committed
// updates. Row indices are stable for the table's life.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/ids.h"
#include "common/math/sparse_optimizer.h"

namespace herald::ps {

struct TableOptions {
  TableId id{0};
  uint32_t dim = 16;
  math::SparseOptimizerConfig optimizer;
  // New rows start uniform in [-init_scale, init_scale); 0 means 1/sqrt(dim).
  float init_scale = 0.0f;
  // Job seed: a row's initial values depend only on (seed, table, key).
  uint64_t seed = 0;
  // 0: unbounded. Otherwise creating row max_rows + 1 fails with
  // RESOURCE_EXHAUSTED (existing rows are untouched; see docs).
  uint64_t max_rows = 0;
  // Rows per slab allocation. Larger slabs: fewer allocations, coarser growth.
  uint32_t rows_per_slab = 16384;
};

// Not thread-safe: the shard serialises access to a table.
class EmbeddingTable {
 public:
  explicit EmbeddingTable(TableOptions options);

  const TableOptions& options() const { return options_; }
  uint32_t row_floats() const { return row_floats_; }
  uint64_t size() const { return versions_.size(); }

  // Index of `key`'s row, creating and initialising it if absent.
  // Errors: RESOURCE_EXHAUSTED naming the table and its cap.
  absl::StatusOr<uint32_t> FindOrCreate(Key key);
  std::optional<uint32_t> Find(Key key) const;

  float* Row(uint32_t index) {
    return slabs_[index / options_.rows_per_slab].get() +
           static_cast<size_t>(index % options_.rows_per_slab) * row_floats_;
  }
  const float* Row(uint32_t index) const {
    return const_cast<EmbeddingTable*>(this)->Row(index);
  }
  uint64_t version(uint32_t index) const { return versions_[index]; }
  void set_version(uint32_t index, uint64_t v) { versions_[index] = v; }

  // Bytes this table holds (slabs, versions, hash index).
  uint64_t MemoryBytes() const;
  // Bytes of the rows' values and optimizer state alone (the lower bound).
  uint64_t RawRowBytes() const { return size() * row_floats_ * sizeof(float); }

  // Calls fn(key, index) for every row, in ascending key order (deterministic
  // output for checkpoints and exports).
  template <typename Fn>
  void ForEachSortedByKey(Fn fn) const {
    std::vector<std::pair<Key, uint32_t>> entries(index_.begin(), index_.end());
    std::sort(entries.begin(), entries.end());
    for (const auto& [key, index] : entries) fn(key, index);
  }

 private:
  TableOptions options_;
  uint32_t row_floats_;
  float init_scale_;
  absl::flat_hash_map<Key, uint32_t> index_;
  std::vector<std::unique_ptr<float[]>> slabs_;
  std::vector<uint64_t> versions_;
};

}  // namespace herald::ps
