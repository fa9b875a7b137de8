#include "common/data/sample_block.h"

namespace herald::data {

void SampleBlock::Clear() {
  labels.clear();
  dense.clear();
  dense_missing.clear();
  offsets.assign(1, 0);
  keys.clear();
}

void SampleBlock::Reserve(size_t samples, size_t keys_per_sample) {
  labels.reserve(samples);
  dense.reserve(samples * schema.num_dense);
  dense_missing.reserve(samples);
  offsets.reserve(samples * schema.num_sparse + 1);
  keys.reserve(samples * keys_per_sample);
}

void SampleBlock::AppendFrom(const SampleBlock& other, size_t s) {
  labels.push_back(other.labels[s]);
  dense.insert(dense.end(), other.dense.begin() + s * schema.num_dense,
               other.dense.begin() + (s + 1) * schema.num_dense);
  dense_missing.push_back(other.dense_missing[s]);
  // The sample's keys are one run in `other`: copied at once, their
  // offsets moved by the difference.
  const size_t first = s * schema.num_sparse;
  const uint32_t from = other.offsets[first];
  const uint32_t to = other.offsets[first + schema.num_sparse];
  const uint32_t base = static_cast<uint32_t>(keys.size());
  keys.insert(keys.end(), other.keys.begin() + from, other.keys.begin() + to);
  for (uint32_t f = 1; f <= schema.num_sparse; ++f) {
    offsets.push_back(other.offsets[first + f] - from + base);
  }
}

void SampleBlock::Truncate(size_t count) {
  if (count >= size()) return;
  labels.resize(count);
  dense.resize(count * schema.num_dense);
  dense_missing.resize(count);
  offsets.resize(count * schema.num_sparse + 1);
  keys.resize(offsets.back());
}

}  // namespace herald::data
