#pragma once
// One dynamic embedding table (or one stripe of one, see ShardTable): 64-bit
// keys, rows created on first touch with the deterministic initializer, rows
// stored in large slabs (not one allocation per row).
//
// A row is RowFloats(optimizer, dim) floats: `dim` values then the optimizer
// state (common/math/sparse_optimizer.h), plus a version counting committed
// updates. A row's index is stable until the row is erased (a shard with a
// disk tier evicts rows, ps_server/shard/shard_table.h); an erased row's
// slot is reused by the next row stored.
//
// Besides the version, each row carries what a disk tier needs: the last
// iteration that used it (`last_use`) and whether it differs from its copy
// on disk (`dirty`: created or updated since it was loaded).
//
// Memory per row: the row floats, 24 bytes of key, version, last use and
// flags, and about 5 to 10 bytes of hash index (a 4-byte row index per
// bucket plus a control byte; the key lives with the row, not in the index).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "common/ids.h"
#include "common/math/sparse_optimizer.h"
#include "ps_server/store/slab_array.h"

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

// Not thread-safe: the owner serialises access.
class EmbeddingTable {
 public:
  explicit EmbeddingTable(TableOptions options);
  EmbeddingTable(const EmbeddingTable&) = delete;
  EmbeddingTable& operator=(const EmbeddingTable&) = delete;

  const TableOptions& options() const { return options_; }
  uint32_t row_floats() const { return row_floats_; }
  // Rows stored now.
  uint64_t size() const { return meta_.size() - free_.size(); }
  // One past the highest row index ever used: live rows are the indices
  // below it for which live(i) holds.
  uint64_t slots() const { return meta_.size(); }
  bool live(uint32_t index) const { return (meta_.Item(index)->flags & kLive) != 0; }

  // Index of `key`'s row, creating and initialising it (dirty) if absent.
  // Errors: RESOURCE_EXHAUSTED naming the table and its cap.
  absl::StatusOr<uint32_t> FindOrCreate(Key key);
  std::optional<uint32_t> Find(Key key) const;
  // Stores a row read from elsewhere (a disk tier), clean. REQUIRES: `key`
  // absent. Errors: RESOURCE_EXHAUSTED as FindOrCreate.
  absl::StatusOr<uint32_t> Insert(Key key, const float* row, uint64_t version);
  // Drops a row; its index may be reused by the next row stored.
  void Erase(uint32_t index);
  // Memory hints only: start loading what a lookup of `key` reads first
  // (its hash-index group), or the row and version of `index`, so that a
  // batch of lookups overlaps its cache misses instead of taking them one
  // after another.
  void PrefetchLookup(Key key) const { index_.prefetch(KeyProbe{key}); }
  void PrefetchRow(uint32_t index) const {
    const char* row = reinterpret_cast<const char*>(Row(index));
    for (uint32_t b = 0; b < row_floats_ * sizeof(float); b += 64) __builtin_prefetch(row + b);
    __builtin_prefetch(meta_.Item(index));
  }
  // Writes the row `key` starts with (values, then optimizer state) to
  // `row` (row_floats() floats) without storing anything.
  void InitialRow(Key key, float* row) const;

  float* Row(uint32_t index) { return rows_.Item(index); }
  const float* Row(uint32_t index) const { return rows_.Item(index); }
  Key key(uint32_t index) const { return meta_.Item(index)->key; }
  uint64_t version(uint32_t index) const { return meta_.Item(index)->version; }
  void set_version(uint32_t index, uint64_t v) { meta_.Item(index)->version = v; }
  // The last iteration that used the row (kept as the highest seen).
  uint32_t last_use(uint32_t index) const { return meta_.Item(index)->last_use; }
  void Touch(uint32_t index, uint32_t iteration) {
    RowMeta* m = meta_.Item(index);
    m->last_use = std::max(m->last_use, iteration);
  }
  bool dirty(uint32_t index) const { return (meta_.Item(index)->flags & kDirty) != 0; }
  void set_dirty(uint32_t index, bool dirty) {
    RowMeta* m = meta_.Item(index);
    m->flags = dirty ? (m->flags | kDirty) : (m->flags & ~kDirty);
  }

  // Bytes this table holds (slabs, keys and versions, hash index).
  uint64_t MemoryBytes() const;
  // Bytes of the rows' values and optimizer state alone (the lower bound).
  uint64_t RawRowBytes() const { return size() * row_floats_ * sizeof(float); }
  // Bytes one stored row takes: its floats, its metadata, and an estimate
  // of its share of the hash index.
  uint64_t BytesPerRow() const { return row_floats_ * sizeof(float) + sizeof(RowMeta) + 8; }

  // Calls fn(key, index) for every row, in ascending key order (deterministic
  // output for checkpoints and exports).
  template <typename Fn>
  void ForEachSortedByKey(Fn fn) const {
    std::vector<std::pair<Key, uint32_t>> entries;
    entries.reserve(size());
    for (uint32_t i = 0; i < slots(); ++i) {
      if (live(i)) entries.emplace_back(key(i), i);
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& [k, index] : entries) fn(k, index);
  }

 private:
  static constexpr uint32_t kLive = 1, kDirty = 2;
  struct RowMeta {
    Key key;
    uint64_t version;
    uint32_t last_use;
    uint32_t flags;
  };
  // A slot for a new row (a freed one first), live, with `key`.
  absl::StatusOr<uint32_t> NewSlot(Key key, uint64_t version, uint32_t flags);
  // The index stores row indices; hashing and equality look the key up in
  // meta_. Lookups by key go through KeyProbe (heterogeneous lookup).
  struct KeyProbe {
    Key key;
  };
  struct IndexHash {
    using is_transparent = void;
    const SlabArray<RowMeta>* meta;
    size_t operator()(uint32_t i) const { return absl::Hash<Key>()(meta->Item(i)->key); }
    size_t operator()(KeyProbe p) const { return absl::Hash<Key>()(p.key); }
  };
  struct IndexEq {
    using is_transparent = void;
    const SlabArray<RowMeta>* meta;
    Key KeyOf(uint32_t i) const { return meta->Item(i)->key; }
    Key KeyOf(KeyProbe p) const { return p.key; }
    template <typename A, typename B>
    bool operator()(A a, B b) const {
      return KeyOf(a) == KeyOf(b);
    }
  };

  TableOptions options_;
  uint32_t row_floats_;
  float init_scale_;
  SlabArray<float> rows_;
  SlabArray<RowMeta> meta_;
  absl::flat_hash_set<uint32_t, IndexHash, IndexEq> index_;
  std::vector<uint32_t> free_;  // erased slots, reused last in, first out
};

}  // namespace herald::ps
