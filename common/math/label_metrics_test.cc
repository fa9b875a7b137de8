#include "common/math/label_metrics.h"

#include <cmath>

#include "common/math/auc.h"
#include "gtest/gtest.h"

namespace herald::math {
namespace {

TEST(JudgeLabel, BinaryLabelsGetAucAndLogLossRegressionLabelsRmse) {
  const LabelMetrics click = JudgeLabel("click", false, {0.1, 0.4, 0.4, 0.7, 0.8}, {0, 0, 1, 1, 0});
  EXPECT_EQ(click.samples, 5u);
  EXPECT_DOUBLE_EQ(click.auc, 3.5 / 6.0);
  EXPECT_DOUBLE_EQ(click.logloss, LogLoss({0.1, 0.4, 0.4, 0.7, 0.8}, {0, 0, 1, 1, 0}));
  EXPECT_EQ(click.rmse, 0);
  EXPECT_EQ(DescribeMetrics(click), "AUC 0.5833, log loss 0.6997 (click)");
  // Errors 1, −2, 0.5: √((1 + 4 + 0.25) / 3).
  const LabelMetrics rating = JudgeLabel("rating", true, {4, 1, 3.5}, {3, 3, 3});
  EXPECT_TRUE(rating.regression);
  EXPECT_DOUBLE_EQ(rating.rmse, std::sqrt(5.25 / 3));
  EXPECT_EQ(DescribeMetrics(rating), "RMSE 1.3229 (rating)");
  EXPECT_EQ(JudgeLabel("none", true, {}, {}).rmse, 0);
}

}  // namespace
}  // namespace herald::math
