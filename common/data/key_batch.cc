#include "common/data/key_batch.h"

namespace herald::data {

KeyBatch KeyBatch::Slice(uint32_t begin, uint32_t end, uint32_t num_dense) const {
  KeyBatch out;
  out.num_samples = end - begin;
  out.num_labels = num_labels;
  out.labels.assign(labels.begin() + size_t{begin} * num_labels,
                    labels.begin() + size_t{end} * num_labels);
  out.dense.assign(dense.begin() + static_cast<size_t>(begin) * num_dense,
                   dense.begin() + static_cast<size_t>(end) * num_dense);
  for (const Table& t : tables) {
    Table s;
    s.features = t.features;
    if (t.features > 1) {
      s.feature_lengths.assign(t.feature_lengths.begin() + size_t{begin} * t.features,
                               t.feature_lengths.begin() + size_t{end} * t.features);
    }
    for (uint32_t i = begin; i < end; ++i) {
      s.keys.insert(s.keys.end(), t.keys.begin() + t.offsets[i], t.keys.begin() + t.offsets[i + 1]);
      if (!t.weights.empty()) {
        s.weights.insert(s.weights.end(), t.weights.begin() + t.offsets[i],
                         t.weights.begin() + t.offsets[i + 1]);
      }
      s.offsets.push_back(static_cast<uint32_t>(s.keys.size()));
    }
    out.tables.push_back(std::move(s));
  }
  return out;
}

}  // namespace herald::data
