#include "common/data/key_batch_conversion.h"

#include <algorithm>
#include <cmath>

namespace herald::data {

namespace {

// log1p of the small counts most dense values are, computed once by the
// same expression: a lookup gives the same bits.
constexpr int32_t kTableSize = 4096;

const float* SmallValueTable() {
  static const float* table = [] {
    auto* t = new float[kTableSize];
    for (int32_t v = 0; v < kTableSize; ++v) {
      t[v] = v > 0 ? std::log1p(static_cast<float>(v)) : 0.0f;
    }
    return t;
  }();
  return table;
}

}  // namespace

float TransformDense(int32_t value) {
  if (value >= 0 && value < kTableSize) return SmallValueTable()[value];
  return value > 0 ? std::log1p(static_cast<float>(value)) : 0.0f;
}

KeyBatch ToKeyBatch(const SampleBlock& block, size_t begin, size_t end) {
  KeyBatch out;
  ToKeyBatch(block, begin, end, &out);
  return out;
}

void ToKeyBatch(const SampleBlock& block, size_t begin, size_t end, KeyBatch* out) {
  const DataSchema& schema = block.schema;
  const uint32_t fields = schema.num_sparse;
  out->num_samples = static_cast<uint32_t>(end - begin);
  out->labels.assign(block.labels.begin() + begin, block.labels.begin() + end);
  out->dense.resize((end - begin) * schema.num_dense);
  float* dense = out->dense.data();
  for (size_t s = begin; s < end; ++s) {
    for (uint32_t i = 0; i < schema.num_dense; ++i) {
      *dense++ = block.DenseMissing(s, i) ? 0.0f : TransformDense(block.Dense(s, i));
    }
  }
  out->tables.resize(fields);
  // Per table: its keys' count first (one pass over the offsets), then the
  // keys copied into place.
  for (uint32_t f = 0; f < fields; ++f) {
    KeyBatch::Table& table = out->tables[f];
    table.offsets.resize(end - begin + 1);
    table.offsets[0] = 0;
    uint32_t count = 0;
    for (size_t s = begin; s < end; ++s) {
      const size_t i = s * fields + f;
      count += block.offsets[i + 1] - block.offsets[i];
      table.offsets[s - begin + 1] = count;
    }
    table.keys.resize(count);
    uint64_t* keys = table.keys.data();
    for (size_t s = begin; s < end; ++s) {
      const size_t i = s * fields + f;
      const uint32_t from = block.offsets[i], to = block.offsets[i + 1];
      if (to - from == 1) {
        *keys++ = block.keys[from];
      } else {
        keys = std::copy(block.keys.begin() + from, block.keys.begin() + to, keys);
      }
    }
  }
}

}  // namespace herald::data
