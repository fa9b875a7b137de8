#pragma once
// Per-column statistics of data read with a column schema (`heraldctl data
// stats` on CSV or binary version 2 inputs): each label's mean and range,
// each dense column's missing count and range of raw values, each sparse
// column's missing count, multi-hot lengths, per-id weights (a column with
// a weight separator) and (from the text) the distinct strings that share
// a key with another string. Distinct ids and
// hot-key shares come from DataStatsCollector (data_stats.h). Exact; not
// thread-safe.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "common/data/column_schema.h"
#include "common/data/sample_block.h"

namespace herald::data {

struct ValueRange {
  uint64_t count = 0;
  double sum = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  void Add(double v);
  double mean() const { return count > 0 ? sum / count : 0.0; }
};

struct LabelColumnStats {
  const ColumnSchema* column = nullptr;
  ValueRange values;
};

struct DenseColumnStats {
  const ColumnSchema* column = nullptr;
  uint64_t missing = 0;
  ValueRange present;  // raw values of the samples that have one
};

struct SparseColumnStats {
  const ColumnSchema* column = nullptr;
  uint64_t missing = 0;       // samples with no id
  uint64_t ids = 0;           // all ids
  uint64_t multi_valued = 0;  // samples with more than one id
  uint32_t max_ids = 0;       // the most ids in one sample's value
  ValueRange weights;         // a column with per-id weights: every id's weight
  // Distinct strings whose key another distinct string has too (string
  // columns read from text); -1: not known (not strings, or not from text).
  int64_t string_collisions = -1;
};

struct ColumnStatsSummary {
  std::vector<LabelColumnStats> labels;
  std::vector<DenseColumnStats> dense;
  std::vector<SparseColumnStats> sparse;
};

class ColumnStatsCollector {
 public:
  // `schema` must outlive the collector.
  explicit ColumnStatsCollector(const ColumnsSchema* schema);
  void Add(const SampleBlock& block);
  // A string id of sparse feature `feature` and its key (CsvReader's
  // observer). Collisions are found by a second, independent 64-bit hash
  // of the text: two strings that agree in both are taken as one.
  void AddStringId(uint32_t feature, absl::string_view id, uint64_t key);
  ColumnStatsSummary Summarize() const;

 private:
  ColumnStatsSummary summary_;
  // Per sparse feature: key -> the second hash of the first string seen
  // with it; and the distinct (key, second hash) pairs beyond the first.
  std::vector<absl::flat_hash_map<uint64_t, uint64_t>> first_string_;
  std::vector<absl::flat_hash_set<std::pair<uint64_t, uint64_t>>> colliding_;
  std::vector<bool> strings_seen_;
};

}  // namespace herald::data
