#include "common/data/key_batch_conversion.h"

#include <cmath>

namespace herald::data {

float TransformDense(int32_t value) {
  return value > 0 ? std::log1p(static_cast<float>(value)) : 0.0f;
}

KeyBatch ToKeyBatch(const SampleBlock& block, size_t begin, size_t end) {
  const DataSchema& schema = block.schema;
  KeyBatch out;
  out.num_samples = static_cast<uint32_t>(end - begin);
  out.tables.resize(schema.num_sparse);
  for (size_t s = begin; s < end; ++s) {
    out.labels.push_back(block.labels[s]);
    for (uint32_t i = 0; i < schema.num_dense; ++i) {
      out.dense.push_back(block.DenseMissing(s, i) ? 0.0f : TransformDense(block.Dense(s, i)));
    }
    for (uint32_t f = 0; f < schema.num_sparse; ++f) {
      for (uint64_t key : block.Keys(s, f)) out.tables[f].keys.push_back(key);
      out.tables[f].offsets.push_back(static_cast<uint32_t>(out.tables[f].keys.size()));
    }
  }
  return out;
}

}  // namespace herald::data
