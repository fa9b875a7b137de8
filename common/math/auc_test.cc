#include "common/math/auc.h"

#include <cmath>

#include "gtest/gtest.h"

namespace herald::math {
namespace {

TEST(ExactAuc, PerfectReversedAndTied) {
  EXPECT_DOUBLE_EQ(ExactAuc({0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(ExactAuc({0.9, 0.8, 0.2, 0.1}, {0, 0, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(ExactAuc({0.5, 0.5, 0.5, 0.5}, {0, 1, 0, 1}), 0.5);
}

TEST(ExactAuc, HandComputedWithTies) {
  // Positives at 0.4 and 0.7, negatives at 0.1, 0.4, 0.8.
  // Pairs (pos > neg): 0.4 vs {0.1: 1, 0.4: 0.5, 0.8: 0} = 1.5; 0.7 vs {1, 1, 0} = 2.
  // AUC = 3.5 / 6.
  EXPECT_DOUBLE_EQ(ExactAuc({0.1, 0.4, 0.4, 0.7, 0.8}, {0, 0, 1, 1, 0}), 3.5 / 6.0);
}

TEST(ExactAuc, OneClassGivesHalf) { EXPECT_DOUBLE_EQ(ExactAuc({0.1, 0.9}, {1, 1}), 0.5); }

TEST(LogLoss, HandComputedAndClamped) {
  EXPECT_NEAR(LogLoss({0.8, 0.3}, {1, 0}), (-std::log(0.8) - std::log(0.7)) / 2, 1e-12);
  EXPECT_NEAR(LogLoss({0.0}, {1}), -std::log(1e-7), 1e-9);
}

}  // namespace
}  // namespace herald::math
