#pragma once
// A columnar block of samples, the unit every reader, writer and the generator
// exchange. No per-sample allocation: all samples share flat arrays.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "common/data/schema.h"

namespace herald::data {

// Not thread-safe. Layout for sample s (0-based):
//   labels[s * num_labels + j]
//   dense[s * num_dense + i]          (raw value; the column's missing value
//                                      when missing, 0 for Criteo)
//   dense_missing[s * W + i / 32] bit i % 32   (1 = feature i missing;
//                                      W = schema.missing_words())
//   keys of categorical feature f:    keys[offsets[s*num_sparse+f] .. offsets[s*num_sparse+f+1])
// An empty key list means the feature is missing. Multi-hot features have
// several keys. With schema.weighted, weights[k] is key k's weight (1 for
// a column without weights); without, `weights` is empty.
struct SampleBlock {
  DataSchema schema = kCriteoSchema;
  std::vector<float> labels;
  std::vector<float> dense;
  std::vector<uint32_t> dense_missing;
  std::vector<uint32_t> offsets{0};
  std::vector<uint64_t> keys;
  std::vector<float> weights;

  explicit SampleBlock(DataSchema s = kCriteoSchema) : schema(s) {}

  size_t size() const { return labels.size() / schema.num_labels; }
  bool empty() const { return labels.empty(); }
  void Clear();
  void Reserve(size_t samples, size_t keys_per_sample);

  absl::Span<const uint64_t> Keys(size_t sample, uint32_t feature) const {
    size_t i = sample * schema.num_sparse + feature;
    return absl::MakeConstSpan(keys.data() + offsets[i], offsets[i + 1] - offsets[i]);
  }
  // Feature `feature`'s key weights (REQUIRES schema.weighted).
  absl::Span<const float> Weights(size_t sample, uint32_t feature) const {
    size_t i = sample * schema.num_sparse + feature;
    return absl::MakeConstSpan(weights.data() + offsets[i], offsets[i + 1] - offsets[i]);
  }
  bool DenseMissing(size_t sample, uint32_t i) const {
    return (dense_missing[sample * schema.missing_words() + i / 32] >> (i % 32)) & 1u;
  }
  float Dense(size_t sample, uint32_t i) const { return dense[sample * schema.num_dense + i]; }
  float Label(size_t sample, uint32_t j = 0) const {
    return labels[sample * schema.num_labels + j];
  }

  // Appends sample `s` of `other` (same schema).
  void AppendFrom(const SampleBlock& other, size_t s);
  // Appends samples [begin, end) of `other` (same schema): the same as
  // AppendFrom for each in order, one copy per array.
  void AppendRange(const SampleBlock& other, size_t begin, size_t end);
  // Removes the samples from `count` on (keeps the first `count`).
  void Truncate(size_t count);
};

}  // namespace herald::data
