#include "scheduler/herald/batch_index.h"

namespace herald::scheduler {

void BatchIndex::Build(const data::KeyBatch& batch) {
  num_samples_ = batch.num_samples;
  const size_t num_tables = batch.tables.size();
  keys_.clear();
  uses_.clear();
  begin_.assign(1, 0);
  ids_.resize(num_tables);
  offsets_.resize(num_tables);
  for (size_t t = 0; t < num_tables; ++t) {
    const data::KeyBatch::Table& table = batch.tables[t];
    scratch_.clear();
    scratch_.reserve(table.keys.size());
    std::vector<uint32_t>& ids = ids_[t];
    ids.resize(table.keys.size());
    for (size_t i = 0; i < table.keys.size(); ++i) {
      auto [it, inserted] = scratch_.try_emplace(table.keys[i], static_cast<uint32_t>(keys_.size()));
      if (inserted) {
        keys_.push_back(table.keys[i]);
        uses_.push_back(0);
      }
      ids[i] = it->second;
      ++uses_[it->second];
    }
    offsets_[t] = table.offsets;
    begin_.push_back(static_cast<uint32_t>(keys_.size()));
  }
}

}  // namespace herald::scheduler
