#include "common/data/key_batch_conversion.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

float TransformDense(float value) {
  if (value >= 0.0f && value < static_cast<float>(kTableSize)) {
    const int32_t i = static_cast<int32_t>(value);
    if (static_cast<float>(i) == value) return SmallValueTable()[i];
  }
  return value > 0.0f ? std::log1p(value) : 0.0f;
}

float TransformDense(const ColumnSchema& column, float value) {
  switch (column.transform) {
    case DenseTransform::kNone:
      return value;
    case DenseTransform::kLog1p:
      return TransformDense(value);
    case DenseTransform::kAffine:
      return value * column.scale + column.shift;
  }
  return value;
}

namespace {

// Keys of features that share tables, or that carry weights: per table,
// each sample's keys (and weights) of its features in feature order, and
// their lengths.
void GroupFeatures(const SampleBlock& block, size_t begin, size_t end,
                   const std::vector<uint32_t>& feature_tables, uint32_t num_tables,
                   KeyBatch* out) {
  const uint32_t fields = block.schema.num_sparse;
  out->tables.assign(num_tables, KeyBatch::Table());
  std::vector<std::vector<uint32_t>> features_of(num_tables);
  for (uint32_t f = 0; f < fields; ++f) features_of[feature_tables[f]].push_back(f);
  for (uint32_t t = 0; t < num_tables; ++t) {
    KeyBatch::Table& table = out->tables[t];
    table.features = static_cast<uint32_t>(features_of[t].size());
    table.offsets.reserve(end - begin + 1);
    for (size_t s = begin; s < end; ++s) {
      for (uint32_t f : features_of[t]) {
        const absl::Span<const uint64_t> keys = block.Keys(s, f);
        table.keys.insert(table.keys.end(), keys.begin(), keys.end());
        if (block.schema.weighted) {
          const absl::Span<const float> weights = block.Weights(s, f);
          table.weights.insert(table.weights.end(), weights.begin(), weights.end());
        }
        if (table.features > 1) table.feature_lengths.push_back(static_cast<uint32_t>(keys.size()));
      }
      table.offsets.push_back(static_cast<uint32_t>(table.keys.size()));
    }
  }
}

}  // namespace

KeyBatch ToKeyBatch(const SampleBlock& block, size_t begin, size_t end,
                    const ColumnsSchema* columns) {
  KeyBatch out;
  ToKeyBatch(block, begin, end, &out, columns);
  return out;
}

void ToKeyBatch(const SampleBlock& block, size_t begin, size_t end, KeyBatch* out,
                const ColumnsSchema* columns) {
  const DataSchema& schema = block.schema;
  const uint32_t fields = schema.num_sparse;
  out->num_samples = static_cast<uint32_t>(end - begin);
  out->num_labels = schema.num_labels;
  out->labels.assign(block.labels.begin() + begin * schema.num_labels,
                     block.labels.begin() + end * schema.num_labels);
  out->dense.resize((end - begin) * schema.num_dense);
  float* dense = out->dense.data();
  if (columns == nullptr) {
    for (size_t s = begin; s < end; ++s) {
      for (uint32_t i = 0; i < schema.num_dense; ++i) {
        *dense++ = block.DenseMissing(s, i) ? 0.0f : TransformDense(block.Dense(s, i));
      }
    }
  } else {
    const std::vector<const ColumnSchema*> dense_columns = columns->OfRole(ColumnRole::kDense);
    for (size_t s = begin; s < end; ++s) {
      for (uint32_t i = 0; i < schema.num_dense; ++i) {
        *dense++ = TransformDense(*dense_columns[i], block.Dense(s, i));
      }
    }
  }
  if (columns != nullptr || schema.weighted) {
    std::vector<uint32_t> feature_tables(fields);
    for (uint32_t f = 0; f < fields; ++f) feature_tables[f] = f;
    uint32_t tables = fields;
    if (columns != nullptr) {
      feature_tables = columns->FeatureTables();
      tables = static_cast<uint32_t>(columns->Tables().size());
    }
    if (tables < fields || schema.weighted) {
      GroupFeatures(block, begin, end, feature_tables, tables, out);
      return;
    }
  }
  out->tables.resize(fields);
  // Sample-major, as the block lies: each table's key count first, then
  // every sample's keys to their tables.
  std::vector<uint32_t> counts(fields, 0);
  for (size_t s = begin; s < end; ++s) {
    const uint32_t* o = block.offsets.data() + s * fields;
    for (uint32_t f = 0; f < fields; ++f) counts[f] += o[f + 1] - o[f];
  }
  std::vector<uint64_t*> cursor(fields);
  std::vector<uint32_t*> offsets(fields);
  for (uint32_t f = 0; f < fields; ++f) {
    KeyBatch::Table& table = out->tables[f];
    table.keys.resize(counts[f]);
    table.weights.clear();
    table.expired.clear();
    table.offsets.resize(end - begin + 1);
    table.offsets[0] = 0;
    cursor[f] = table.keys.data();
    offsets[f] = table.offsets.data() + 1;
  }
  const uint64_t* keys = block.keys.data();
  for (size_t s = begin; s < end; ++s) {
    const uint32_t* o = block.offsets.data() + s * fields;
    for (uint32_t f = 0; f < fields; ++f) {
      uint64_t*& to = cursor[f];
      for (uint32_t k = o[f]; k < o[f + 1]; ++k) *to++ = keys[k];
      *offsets[f]++ = static_cast<uint32_t>(to - out->tables[f].keys.data());
    }
  }
}

}  // namespace herald::data
