#include "ps_server/shard/shard_table.h"

#include "gtest/gtest.h"

namespace herald::ps {
namespace {

TableOptions Options(uint64_t max_rows) {
  TableOptions o;
  o.id = TableId(2);
  o.dim = 4;
  o.max_rows = max_rows;
  return o;
}

TEST(ShardTable, GroupsKeysByStripeKeepingTheirOrder) {
  ShardTable table(Options(0), 4);
  std::vector<Key> keys;
  for (Key k = 0; k < 100; ++k) keys.push_back(k * 31 + 5);
  StripeGroups g = GroupByStripe(table, keys.data(), keys.size());
  ASSERT_EQ(g.begin.size(), 5u);
  EXPECT_EQ(g.begin.back(), 100u);
  std::vector<bool> seen(100, false);
  for (uint32_t s = 0; s < 4; ++s) {
    EXPECT_LT(g.begin[s], g.begin[s + 1]) << "stripe " << s << " is empty";
    for (uint32_t j = g.begin[s]; j < g.begin[s + 1]; ++j) {
      EXPECT_EQ(table.StripeOf(keys[g.order[j]]), s);
      if (j > g.begin[s]) {
        EXPECT_LT(g.order[j - 1], g.order[j]);
      }
      seen[g.order[j]] = true;
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 100);
}

TEST(ShardTable, CapCountsRowsOfAllStripes) {
  ShardTable table(Options(10), 4);
  int created = 0, refused = 0;
  for (Key k = 0; k < 30; ++k) {
    ShardTable::Stripe& s = table.stripe(table.StripeOf(k));
    absl::MutexLock lock(&s.mu);
    auto r = table.FindOrCreate(s, k, 0);
    if (r.ok()) {
      ++created;
    } else {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
      ++refused;
    }
  }
  EXPECT_EQ(created, 10);
  EXPECT_EQ(refused, 20);
  EXPECT_EQ(table.rows(), 10u);
  EXPECT_EQ(table.RawRowBytes(), 10u * 4 * 4);
}

}  // namespace
}  // namespace herald::ps
