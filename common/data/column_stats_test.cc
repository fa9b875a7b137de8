#include "common/data/column_stats.h"

#include "common/data/string_key.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

// A label "y" and sparse columns of these names.
ColumnsSchema LabelAndSparse(std::initializer_list<const char*> sparse) {
  ColumnsSchema schema;
  schema.columns.emplace_back();
  schema.columns.back().name = "y";
  schema.columns.back().role = ColumnRole::kLabel;
  for (const char* name : sparse) {
    schema.columns.emplace_back();
    schema.columns.back().name = name;
    schema.columns.back().role = ColumnRole::kSparse;
  }
  return schema;
}

TEST(ColumnStats, CountsEveryDistinctStringThatSharesAKey) {
  ColumnsSchema schema = LabelAndSparse({"u", "v"});
  schema.columns[1].ids = IdFormat::kString;
  schema.columns[2].ids = IdFormat::kString;
  ColumnStatsCollector stats(&schema);
  // Real keys do not collide; these stand-ins make "a", "b" and "c" share
  // key 5 in feature 0, and "a" appear twice.
  stats.AddStringId(0, "a", 5);
  stats.AddStringId(0, "b", 5);
  stats.AddStringId(0, "a", 5);
  stats.AddStringId(0, "c", 5);
  stats.AddStringId(0, "d", 6);
  stats.AddStringId(1, "a", StringKey("a"));
  stats.AddStringId(1, "b", StringKey("b"));
  const ColumnStatsSummary s = stats.Summarize();
  ASSERT_EQ(s.sparse.size(), 2u);
  EXPECT_EQ(s.sparse[0].string_collisions, 3);
  EXPECT_EQ(s.sparse[1].string_collisions, 0);
}

TEST(ColumnStats, SummarisesPerIdWeightsOfAWeightedColumn) {
  ColumnsSchema schema = LabelAndSparse({"g", "u"});
  schema.columns[1].multi_hot_separator = '|';
  schema.columns[1].weight_separator = ':';
  SampleBlock block(schema.Layout());
  ASSERT_TRUE(block.schema.weighted);
  // Sample 0: g {1:0.5, 2:-2}, u {7}; sample 1: g {}, u {8}.
  block.labels = {1, 0};
  block.dense_missing = {0, 0};
  block.keys = {1, 2, 7, 8};
  block.weights = {0.5f, -2.0f, 1.0f, 1.0f};
  block.offsets = {0, 2, 3, 3, 4};
  ColumnStatsCollector stats(&schema);
  stats.Add(block);
  const ColumnStatsSummary s = stats.Summarize();
  EXPECT_EQ(s.sparse[0].weights.count, 2u);
  EXPECT_EQ(s.sparse[0].weights.min, -2.0);
  EXPECT_EQ(s.sparse[0].weights.max, 0.5);
  EXPECT_EQ(s.sparse[0].weights.mean(), -0.75);
  EXPECT_EQ(s.sparse[1].weights.count, 0u);  // no weight separator: nothing
}

}  // namespace
}  // namespace herald::data
