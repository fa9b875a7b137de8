#include "common/math/rank_ordered_sum.h"

#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace herald::math {
namespace {

using Part = std::pair<uint32_t, std::vector<float>>;

std::vector<float> Sum(std::vector<Part> parts) {
  std::vector<float> sum(2);
  RankOrderedSum(
      parts, 2, [](const Part& p) { return p.first; },
      [](const Part& p) { return p.second.data(); }, sum.data());
  return sum;
}

// Float addition is not associative: (1e8 + 1) - 1e8 is 0 but (1e8 - 1e8)
// + 1 is 1. The sum follows the ranks, whatever order the parts come in.
TEST(RankOrderedSum, AddsInRankOrderWhateverTheInputOrder) {
  const Part r0{0, {1e8f, 3}}, r1{1, {1, 4}}, r2{2, {-1e8f, 5}};
  const std::vector<float> want = {(1e8f + 1) + -1e8f, 12};
  EXPECT_EQ(Sum({r0, r1, r2}), want);
  EXPECT_EQ(Sum({r2, r0, r1}), want);
  EXPECT_EQ(Sum({r1, r2, r0}), want);
  EXPECT_EQ(want[0], 0.0f);  // not 1: rank 1's 1 was lost to rank 0's 1e8
  EXPECT_EQ(Sum({Part{7, {2, 3}}}), (std::vector<float>{2, 3}));
}

}  // namespace
}  // namespace herald::math
