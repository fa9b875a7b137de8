#include "common/data/column_stats.h"

#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace herald::data {
namespace {

// Independent of StringKey's seed 0: the second hash collision checks use.
constexpr uint64_t kSecondHashSeed = 0x9E3779B97F4A7C15ull;

}  // namespace

void ValueRange::Add(double v) {
  ++count;
  sum += v;
  min = std::min(min, v);
  max = std::max(max, v);
}

ColumnStatsCollector::ColumnStatsCollector(const ColumnsSchema* schema) {
  for (const ColumnSchema* c : schema->OfRole(ColumnRole::kLabel)) {
    summary_.labels.push_back({c, {}});
  }
  for (const ColumnSchema* c : schema->OfRole(ColumnRole::kDense)) {
    summary_.dense.push_back({c, 0, {}});
  }
  for (const ColumnSchema* c : schema->OfRole(ColumnRole::kSparse)) {
    SparseColumnStats s;
    s.column = c;
    summary_.sparse.push_back(s);
  }
  first_string_.resize(summary_.sparse.size());
  colliding_.resize(summary_.sparse.size());
  strings_seen_.assign(summary_.sparse.size(), false);
}

void ColumnStatsCollector::Add(const SampleBlock& block) {
  const DataSchema& layout = block.schema;
  for (size_t s = 0; s < block.size(); ++s) {
    for (uint32_t j = 0; j < layout.num_labels && j < summary_.labels.size(); ++j) {
      summary_.labels[j].values.Add(block.Label(s, j));
    }
    for (uint32_t i = 0; i < layout.num_dense && i < summary_.dense.size(); ++i) {
      DenseColumnStats& d = summary_.dense[i];
      if (block.DenseMissing(s, i)) {
        ++d.missing;
      } else {
        d.present.Add(block.Dense(s, i));
      }
    }
    for (uint32_t f = 0; f < layout.num_sparse && f < summary_.sparse.size(); ++f) {
      SparseColumnStats& sp = summary_.sparse[f];
      const uint32_t n = static_cast<uint32_t>(block.Keys(s, f).size());
      sp.ids += n;
      sp.missing += n == 0;
      sp.multi_valued += n > 1;
      sp.max_ids = std::max(sp.max_ids, n);
      if (layout.weighted && sp.column->weight_separator != 0) {
        for (float w : block.Weights(s, f)) sp.weights.Add(w);
      }
    }
  }
}

void ColumnStatsCollector::AddStringId(uint32_t feature, absl::string_view id, uint64_t key) {
  if (feature >= first_string_.size()) return;
  strings_seen_[feature] = true;
  const uint64_t second = XXH64(id.data(), id.size(), kSecondHashSeed);
  auto [it, added] = first_string_[feature].emplace(key, second);
  if (!added && it->second != second) colliding_[feature].insert({key, second});
}

ColumnStatsSummary ColumnStatsCollector::Summarize() const {
  ColumnStatsSummary out = summary_;
  for (size_t f = 0; f < out.sparse.size(); ++f) {
    if (!strings_seen_[f]) continue;
    // Each colliding key's first string collides too.
    absl::flat_hash_set<uint64_t> keys;
    for (const auto& [key, second] : colliding_[f]) keys.insert(key);
    out.sparse[f].string_collisions = static_cast<int64_t>(colliding_[f].size() + keys.size());
  }
  return out;
}

}  // namespace herald::data
