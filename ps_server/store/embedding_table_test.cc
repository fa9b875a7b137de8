#include "ps_server/store/embedding_table.h"

#include <cmath>
#include <vector>

#include "common/rng.h"
#include "gtest/gtest.h"

namespace herald::ps {
namespace {

TableOptions Adagrad(uint32_t dim) {
  TableOptions o;
  o.id = TableId(3);
  o.dim = dim;
  o.seed = 42;
  o.optimizer.kind = math::SparseOptimizerKind::kAdagrad;
  o.optimizer.initial_accumulator = 0.1f;
  o.rows_per_slab = 4;
  return o;
}

TEST(EmbeddingTable, CreatesRowsOnFirstTouchWithDeterministicInit) {
  EmbeddingTable t(Adagrad(8));
  EXPECT_EQ(t.row_floats(), 16u);
  auto a = t.FindOrCreate(1000);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*t.FindOrCreate(1000), *a);
  EXPECT_EQ(t.size(), 1u);
  std::vector<float> expect(8);
  InitEmbeddingRow(42, 3, 1000, 1.0f / std::sqrt(8.0f), expect.data(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t.Row(*a)[i], expect[i]);
  for (int i = 8; i < 16; ++i) EXPECT_EQ(t.Row(*a)[i], 0.1f);  // accumulators
  EXPECT_EQ(t.version(*a), 0u);

  // Another table object (another shard, another run): same row.
  EmbeddingTable u(Adagrad(8));
  u.FindOrCreate(7).IgnoreError();
  auto b = u.FindOrCreate(1000);
  ASSERT_TRUE(b.ok());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(u.Row(*b)[i], t.Row(*a)[i]);
}

TEST(EmbeddingTable, RowsSurviveSlabGrowth) {
  EmbeddingTable t(Adagrad(2));
  std::vector<uint32_t> idx;
  for (Key k = 0; k < 50; ++k) idx.push_back(*t.FindOrCreate(k * 977));
  t.Row(idx[0])[0] = 123.0f;
  t.set_version(idx[0], 9);
  for (Key k = 50; k < 500; ++k) ASSERT_TRUE(t.FindOrCreate(k * 977).ok());
  EXPECT_EQ(t.Row(*t.Find(0))[0], 123.0f);
  EXPECT_EQ(t.version(*t.Find(0)), 9u);
  EXPECT_FALSE(t.Find(1).has_value());
  EXPECT_EQ(t.size(), 500u);
}

TEST(EmbeddingTable, FirstSlabGrowsWithoutLosingRows) {
  TableOptions o = Adagrad(3);
  o.rows_per_slab = 1000;  // the first slab doubles 16, 32, ... 1000, then full slabs
  EmbeddingTable t(o);
  for (Key k = 0; k < 2500; ++k) {
    uint32_t i = *t.FindOrCreate(k + 100);
    t.Row(i)[0] = static_cast<float>(k);
    t.set_version(i, k);
  }
  for (Key k = 0; k < 2500; ++k) {
    auto i = t.Find(k + 100);
    ASSERT_TRUE(i.has_value());
    EXPECT_EQ(t.Row(*i)[0], static_cast<float>(k));
    EXPECT_EQ(t.version(*i), k);
    EXPECT_EQ(t.key(*i), k + 100);
  }
  // 3 slabs of 1000 rows of 6 floats, plus 16 bytes of key+version per row.
  EXPECT_GE(t.MemoryBytes(), 3000u * (6 * 4 + 16));
}

TEST(EmbeddingTable, CapRefusesNewRowsAndKeepsOldOnes) {
  TableOptions o = Adagrad(4);
  o.max_rows = 2;
  EmbeddingTable t(o);
  ASSERT_TRUE(t.FindOrCreate(1).ok());
  ASSERT_TRUE(t.FindOrCreate(2).ok());
  auto third = t.FindOrCreate(3);
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("table 3 is full"), std::string::npos);
  EXPECT_TRUE(t.FindOrCreate(2).ok());
  EXPECT_EQ(t.size(), 2u);
}

TEST(EmbeddingTable, IteratesInKeyOrder) {
  EmbeddingTable t(Adagrad(2));
  for (Key k : {30, 10, 20}) ASSERT_TRUE(t.FindOrCreate(k).ok());
  std::vector<Key> keys;
  t.ForEachSortedByKey([&](Key k, uint32_t) { keys.push_back(k); });
  EXPECT_EQ(keys, (std::vector<Key>{10, 20, 30}));
}

TEST(EmbeddingTable, MemoryAccountsForSlabsAndIndex) {
  TableOptions o = Adagrad(16);
  o.rows_per_slab = 1024;
  EmbeddingTable t(o);
  for (Key k = 0; k < 10000; ++k) ASSERT_TRUE(t.FindOrCreate(k).ok());
  EXPECT_EQ(t.RawRowBytes(), 10000u * 32 * 4);
  EXPECT_GE(t.MemoryBytes(), t.RawRowBytes());
  EXPECT_LT(t.MemoryBytes(), 2 * t.RawRowBytes());
}

}  // namespace
}  // namespace herald::ps
