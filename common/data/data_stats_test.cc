#include "common/data/data_stats.h"

#include "gtest/gtest.h"

namespace herald::data {
namespace {

TEST(TopShare, HandComputed) {
  std::vector<uint64_t> counts = {50, 20, 10, 5, 5, 4, 3, 1, 1, 1};  // total 100
  EXPECT_DOUBLE_EQ(TopShare(counts, 0.10), 0.50);                    // top 1 key
  EXPECT_DOUBLE_EQ(TopShare(counts, 0.01), 0.50);                    // at least one key
  EXPECT_DOUBLE_EQ(TopShare(counts, 0.30), 0.80);
  EXPECT_DOUBLE_EQ(TopShare({}, 0.1), 0.0);
}

TEST(DataStatsCollector, CountsDistinctMissingAndHottest) {
  SampleBlock b(DataSchema{0, 2});
  // Table 0 keys: 7, 7, 7, 9 ; table 1: missing, 3, missing, 3 (multi-hot 3,4)
  b.labels = {1, 0, 0, 1};
  b.dense_missing = {0, 0, 0, 0};
  b.offsets = {0, 1, 1, 2, 3, 4, 4, 5, 7};
  b.keys = {7, 7, 3, 7, 9, 3, 4};
  DataStatsCollector c(b.schema);
  c.Add(b);
  DatasetSummary s = c.Summarize(1);
  EXPECT_EQ(s.rows, 4u);
  EXPECT_EQ(s.positives, 2u);
  EXPECT_EQ(s.tables[0].distinct_keys, 2u);
  EXPECT_EQ(s.tables[0].accesses, 4u);
  EXPECT_EQ(s.tables[0].missing, 0u);
  EXPECT_DOUBLE_EQ(s.tables[0].top10_share, 0.75);
  ASSERT_EQ(s.tables[0].hottest.size(), 1u);
  EXPECT_EQ(s.tables[0].hottest[0], (std::pair<uint64_t, uint64_t>{7, 3}));
  EXPECT_EQ(s.tables[1].missing, 2u);
  EXPECT_EQ(s.tables[1].distinct_keys, 2u);
  EXPECT_EQ(s.tables[1].accesses, 3u);
}

}  // namespace
}  // namespace herald::data
