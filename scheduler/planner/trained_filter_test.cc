#include "scheduler/planner/trained_filter.h"

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

TEST(TrainedFilterTest, ReportsEveryKeyAddedAndFewOthers) {
  TrainedFilter filter(uint64_t{1} << 16);
  for (Key key = 0; key < 8192; ++key) EXPECT_FALSE(filter.MayContain(key * 7 + 3)) << key;
  for (Key key = 0; key < 8192; ++key) filter.Add(key * 7 + 3);  // one key per 8 bits
  for (Key key = 0; key < 8192; ++key) ASSERT_TRUE(filter.MayContain(key * 7 + 3)) << key;
  int false_positives = 0;
  for (Key key = 1'000'000; key < 1'100'000; ++key) false_positives += filter.MayContain(key);
  EXPECT_LT(false_positives, 4000);  // ~2.4% expected at 4 hashes and 8 bits per key
  EXPECT_GT(false_positives, 0);
}

}  // namespace
}  // namespace herald::scheduler
