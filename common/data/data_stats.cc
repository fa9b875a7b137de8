#include "common/data/data_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace herald::data {

DataStatsCollector::DataStatsCollector(DataSchema schema)
    : schema_(schema), counts_(schema.num_sparse), missing_(schema.num_sparse, 0) {}

void DataStatsCollector::Add(const SampleBlock& block) {
  for (size_t s = 0; s < block.size(); ++s) {
    ++rows_;
    if (block.Label(s) > 0.5f) ++positives_;
    for (uint32_t t = 0; t < schema_.num_sparse; ++t) {
      auto keys = block.Keys(s, t);
      if (keys.empty()) ++missing_[t];
      for (uint64_t k : keys) ++counts_[t][k];
    }
  }
}

double TopShare(const std::vector<uint64_t>& counts, double fraction) {
  if (counts.empty()) return 0.0;
  uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  if (total == 0) return 0.0;
  size_t k = static_cast<size_t>(std::ceil(fraction * counts.size()));
  k = std::clamp<size_t>(k, 1, counts.size());
  uint64_t top = std::accumulate(counts.begin(), counts.begin() + k, uint64_t{0});
  return static_cast<double>(top) / static_cast<double>(total);
}

DatasetSummary DataStatsCollector::Summarize(size_t keep_hottest) const {
  DatasetSummary out;
  out.rows = rows_;
  out.positives = positives_;
  for (uint32_t t = 0; t < schema_.num_sparse; ++t) {
    TableStatsSummary ts;
    ts.distinct_keys = counts_[t].size();
    ts.missing = missing_[t];
    std::vector<std::pair<uint64_t, uint64_t>> entries(counts_[t].begin(), counts_[t].end());
    // Descending count, then ascending key: deterministic.
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    std::vector<uint64_t> counts;
    counts.reserve(entries.size());
    for (const auto& e : entries) {
      counts.push_back(e.second);
      ts.accesses += e.second;
    }
    ts.top1_share = TopShare(counts, 0.01);
    ts.top10_share = TopShare(counts, 0.10);
    entries.resize(std::min(entries.size(), keep_hottest));
    ts.hottest = std::move(entries);
    out.tables.push_back(std::move(ts));
  }
  return out;
}

}  // namespace herald::data
