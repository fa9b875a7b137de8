#include "common/data/sample_block.h"

namespace herald::data {

void SampleBlock::Clear() {
  labels.clear();
  dense.clear();
  dense_missing.clear();
  offsets.assign(1, 0);
  keys.clear();
  weights.clear();
}

void SampleBlock::Reserve(size_t samples, size_t keys_per_sample) {
  labels.reserve(samples * schema.num_labels);
  dense.reserve(samples * schema.num_dense);
  dense_missing.reserve(samples * schema.missing_words());
  offsets.reserve(samples * schema.num_sparse + 1);
  keys.reserve(samples * keys_per_sample);
  if (schema.weighted) weights.reserve(samples * keys_per_sample);
}

void SampleBlock::AppendFrom(const SampleBlock& other, size_t s) { AppendRange(other, s, s + 1); }

void SampleBlock::AppendRange(const SampleBlock& other, size_t begin, size_t end) {
  if (begin >= end) return;
  labels.insert(labels.end(), other.labels.begin() + begin * schema.num_labels,
                other.labels.begin() + end * schema.num_labels);
  dense.insert(dense.end(), other.dense.begin() + begin * schema.num_dense,
               other.dense.begin() + end * schema.num_dense);
  const size_t words = schema.missing_words();
  dense_missing.insert(dense_missing.end(), other.dense_missing.begin() + begin * words,
                       other.dense_missing.begin() + end * words);
  // The samples' keys are one run in `other`: copied at once, their
  // offsets moved by the difference.
  const size_t first = begin * schema.num_sparse, last = end * schema.num_sparse;
  const uint32_t from = other.offsets[first];
  const uint32_t to = other.offsets[last];
  const uint32_t base = static_cast<uint32_t>(keys.size());
  keys.insert(keys.end(), other.keys.begin() + from, other.keys.begin() + to);
  if (schema.weighted) {
    weights.insert(weights.end(), other.weights.begin() + from, other.weights.begin() + to);
  }
  const size_t at = offsets.size();
  offsets.resize(at + (last - first));
  uint32_t* out = offsets.data() + at;
  for (size_t i = first + 1; i <= last; ++i) *out++ = other.offsets[i] - from + base;
}

void SampleBlock::Truncate(size_t count) {
  if (count >= size()) return;
  labels.resize(count * schema.num_labels);
  dense.resize(count * schema.num_dense);
  dense_missing.resize(count * schema.missing_words());
  offsets.resize(count * schema.num_sparse + 1);
  keys.resize(offsets.back());
  if (schema.weighted) weights.resize(offsets.back());
}

}  // namespace herald::data
