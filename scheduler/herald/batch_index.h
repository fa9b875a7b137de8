#pragma once
// Dense batch-local ids for the distinct keys of one global batch, so the
// planner looks each key up in its maps once per batch, not once per use.
// Ids of table t are [begin(t), begin(t + 1)), in first-use order.

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/data/key_batch.h"
#include "common/ids.h"

namespace herald::scheduler {

class BatchIndex {
 public:
  // Rebuilds the index for `batch`, reusing this object's buffers.
  void Build(const data::KeyBatch& batch);

  uint32_t num_samples() const { return num_samples_; }
  uint32_t num_tables() const { return static_cast<uint32_t>(ids_.size()); }
  uint32_t num_ids() const { return static_cast<uint32_t>(keys_.size()); }
  uint32_t begin(uint32_t table) const { return begin_[table]; }
  Key key(uint32_t id) const { return keys_[id]; }
  // Uses of the key in the batch (a multi-hot sample may count twice).
  uint32_t uses(uint32_t id) const { return uses_[id]; }
  // Ids parallel to batch.tables[t].keys (use the batch's offsets per sample).
  const std::vector<uint32_t>& ids(uint32_t table) const { return ids_[table]; }
  const std::vector<uint32_t>& offsets(uint32_t table) const { return offsets_[table]; }

 private:
  uint32_t num_samples_ = 0;
  std::vector<Key> keys_;
  std::vector<uint32_t> uses_;
  std::vector<uint32_t> begin_;
  std::vector<std::vector<uint32_t>> ids_;
  std::vector<std::vector<uint32_t>> offsets_;
  absl::flat_hash_map<Key, uint32_t> scratch_;
};

}  // namespace herald::scheduler
