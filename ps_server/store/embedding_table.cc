#include "ps_server/store/embedding_table.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/math/optimizer_spec.h"

namespace herald::ps {

EmbeddingTable::EmbeddingTable(TableOptions options)
    : options_(options),
      row_floats_(math::RowFloats(options.optimizer.kind, options.dim)),
      init_scale_(math::EffectiveInitScale(options.init_scale, options.dim)),
      rows_(row_floats_, options.rows_per_slab),
      meta_(1, options.rows_per_slab),
      index_(0, IndexHash{&meta_}, IndexEq{&meta_}) {}

std::optional<uint32_t> EmbeddingTable::Find(Key key) const {
  auto it = index_.find(KeyProbe{key});
  if (it == index_.end()) return std::nullopt;
  return *it;
}

absl::StatusOr<uint32_t> EmbeddingTable::NewSlot(Key key, uint64_t version, uint32_t flags) {
  const uint64_t n = size();
  if ((options_.max_rows > 0 && n >= options_.max_rows) || n >= UINT32_MAX) {
    return absl::ResourceExhaustedError(absl::StrCat("table ", options_.id.value(), " is full: ", n,
                                                     " rows (max_rows ", options_.max_rows, ")"));
  }
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<uint32_t>(rows_.Append());
    meta_.Append();
  }
  *meta_.Item(index) = RowMeta{key, version, 0, flags | kLive};
  index_.insert(index);
  return index;
}

absl::StatusOr<uint32_t> EmbeddingTable::FindOrCreate(Key key) {
  auto it = index_.find(KeyProbe{key});
  if (it != index_.end()) return *it;
  absl::StatusOr<uint32_t> index = NewSlot(key, 0, kDirty);
  if (index.ok()) InitialRow(key, Row(*index));
  return index;
}

absl::StatusOr<uint32_t> EmbeddingTable::Insert(Key key, const float* row, uint64_t version) {
  absl::StatusOr<uint32_t> index = NewSlot(key, version, 0);
  if (index.ok()) std::memcpy(Row(*index), row, row_floats_ * sizeof(float));
  return index;
}

void EmbeddingTable::Erase(uint32_t index) {
  index_.erase(index);  // hashes the key: before the slot is cleared
  *meta_.Item(index) = RowMeta{};
  free_.push_back(index);
}

void EmbeddingTable::InitialRow(Key key, float* row) const {
  math::InitialRow(options_.seed, options_.id.value(), key, options_.dim, options_.init_scale,
                   options_.optimizer, row);
}

uint64_t EmbeddingTable::MemoryBytes() const {
  // flat_hash_set: one 4-byte slot and one control byte per bucket.
  const uint64_t index_bytes = index_.bucket_count() * (sizeof(uint32_t) + 1);
  return rows_.AllocatedBytes() + meta_.AllocatedBytes() + index_bytes;
}

}  // namespace herald::ps
