#include "common/data/schema_generator.h"

#include <string>

#include "common/data/csv_reader.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

// Every kind of column, tab-separated, no header.
ColumnsSchema AllKinds() {
  ColumnsSchema s;
  s.separator = '\t';
  s.header = false;
  auto add = [&](const char* name, ColumnRole role) -> ColumnSchema& {
    s.columns.emplace_back();
    s.columns.back().name = name;
    s.columns.back().role = role;
    return s.columns.back();
  };
  add("y", ColumnRole::kLabel);
  add("r", ColumnRole::kLabel).label = LabelKind::kRegression;
  add("d", ColumnRole::kDense).transform = DenseTransform::kLog1p;
  add("h", ColumnRole::kSparse).multi_hot_separator = ',';
  add("n", ColumnRole::kSparse).ids = IdFormat::kDecimal;
  ColumnSchema& u = add("u", ColumnRole::kSparse);
  u.ids = IdFormat::kString;
  u.multi_hot_separator = '|';
  u.weight_separator = ':';
  add("x", ColumnRole::kIgnore);
  return s;
}

TEST(SchemaGenerator, RowsReadBackWithTheSchemaAndRepeatForTheSameSeed) {
  SchemaGeneratorOptions o;
  o.seed = 9;
  o.cardinality = 50;
  const SchemaGenerator gen(AllKinds(), o);
  std::string text;
  for (uint64_t r = 0; r < 3000; ++r) text += gen.Row(r) + "\n";
  EXPECT_EQ(SchemaGenerator(AllKinds(), o).Row(1234), gen.Row(1234));
  o.seed = 10;
  EXPECT_NE(SchemaGenerator(AllKinds(), o).Row(1234), gen.Row(1234));

  ReaderOptions ro;
  ro.on_malformed = OnMalformed::kFail;
  CsvReader reader({"gen"}, MemoryOpener({text}), AllKinds(), ro);
  SampleBlock block(reader.schema());
  for (;;) {
    absl::StatusOr<size_t> n = reader.Read(1000, &block);
    ASSERT_TRUE(n.ok()) << n.status();
    if (*n == 0) break;
  }
  ASSERT_EQ(block.size(), 3000u);
  double clicks = 0;
  size_t multi = 0, missing = 0, weighted = 0;
  for (size_t s = 0; s < block.size(); ++s) {
    clicks += block.Label(s, 0);
    multi += block.Keys(s, 2).size() > 1;
    missing += block.Keys(s, 0).empty();
    for (float w : block.Weights(s, 2)) weighted += w != 1.0f;
    for (float w : block.Weights(s, 0)) EXPECT_EQ(w, 1.0f);  // a column without weights
  }
  EXPECT_GT(weighted, 1000u);  // u's ids carry weights 0.25 … 2
  // Labels of both values, multi-hot strings, about 10% missing.
  EXPECT_GT(clicks, 300);
  EXPECT_LT(clicks, 2700);
  EXPECT_GT(multi, 1000u);
  EXPECT_GT(missing, 150u);
  EXPECT_LT(missing, 450u);
}

}  // namespace
}  // namespace herald::data
