#pragma once
// Dataset statistics for `heraldctl data stats`: rows, label rate, and per
// table distinct keys, missing share and the share of accesses taken by the
// hottest 1% / 10% of keys.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/data/sample_block.h"

namespace herald::data {

struct TableStatsSummary {
  uint64_t distinct_keys = 0;
  uint64_t accesses = 0;
  uint64_t missing = 0;   // samples without any key
  double top1_share = 0;  // accesses by the hottest 1% of keys / all accesses
  double top10_share = 0;
  // Hottest keys first, up to the number asked for in Summarize().
  std::vector<std::pair<uint64_t, uint64_t>> hottest;  // (key, count)
};

struct DatasetSummary {
  uint64_t rows = 0;
  uint64_t positives = 0;
  std::vector<TableStatsSummary> tables;
};

// Exact counts (one hash map per table). Not thread-safe.
class DataStatsCollector {
 public:
  explicit DataStatsCollector(DataSchema schema);
  void Add(const SampleBlock& block);
  // `keep_hottest`: how many hottest keys per table to return (for warm start).
  DatasetSummary Summarize(size_t keep_hottest = 0) const;

 private:
  DataSchema schema_;
  uint64_t rows_ = 0, positives_ = 0;
  std::vector<absl::flat_hash_map<uint64_t, uint64_t>> counts_;
  std::vector<uint64_t> missing_;
};

// Share of the total taken by the largest ceil(fraction * n) counts.
// REQUIRES: `counts` sorted in descending order.
double TopShare(const std::vector<uint64_t>& counts, double fraction);

}  // namespace herald::data
