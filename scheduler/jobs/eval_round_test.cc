#include "scheduler/jobs/eval_round.h"

#include <string>
#include <vector>

#include "common/math/auc.h"
#include "common/math/label_metrics.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

std::string Bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

TEST(EvalRound, CombinesEveryBatchInBatchOrderWhateverTheArrivalOrder) {
  // 5 batches over 2 workers: 0, 2, 4 are worker 0's; 1, 3 worker 1's.
  const std::vector<std::vector<float>> batches = {
      {0.9f, 0.1f}, {0.8f}, {0.3f, 0.6f, 0.2f}, {0.7f}, {0.4f, 0.5f}};
  const std::vector<float> labels = {1, 0, 1, 0, 1, 0, 1, 1, 0};
  EvalRound round(10, {2, 1, 3, 1, 2}, 2);
  for (uint32_t index : {3u, 0u, 4u, 1u}) {
    ASSERT_TRUE(round.Accept(EvalRound::WorkerOf(index, 2), index, Bytes(batches[index])).ok());
    EXPECT_FALSE(round.complete());
  }
  ASSERT_TRUE(round.Accept(0, 2, Bytes(batches[2])).ok());
  ASSERT_TRUE(round.complete());
  std::vector<double> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  const EvalResult result = round.Compute(labels);
  ASSERT_EQ(result.size(), 1u);
  const math::LabelMetrics& r = result[0];
  EXPECT_EQ(r.samples, 9u);
  EXPECT_EQ(r.auc, math::ExactAuc(all, labels));  // bit for bit: one process, in order
  EXPECT_EQ(r.logloss, math::LogLoss(all, labels));
}

TEST(EvalRound, RefusesAnswersThatDoNotFitNamingWhat) {
  EvalRound round(7, {2, 2}, 2);
  auto expect = [&](uint32_t worker, uint32_t index, const std::vector<float>& p,
                    absl::StatusCode code, const std::string& text) {
    const absl::Status s = round.Accept(worker, index, Bytes(p));
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_NE(s.message().find(text), std::string::npos) << s;
  };
  expect(0, 2, {0.5f, 0.5f}, absl::StatusCode::kInvalidArgument, "there are 2 batches");
  expect(0, 1, {0.5f, 0.5f}, absl::StatusCode::kInvalidArgument, "it is worker 1's");
  expect(0, 0, {0.5f}, absl::StatusCode::kInvalidArgument, "expected 8 (2 samples × 1 head(s))");
  expect(0, 0, {0.5f, 1.5f}, absl::StatusCode::kInvalidArgument, "prediction 1 is 1.5");
  expect(0, 0, {0.5f, NAN}, absl::StatusCode::kInvalidArgument, "not a probability");
  EXPECT_FALSE(round.complete());  // nothing refused was kept
  ASSERT_TRUE(round.Accept(0, 0, Bytes({0.5f, 0.25f})).ok());
  expect(0, 0, {0.5f, 0.25f}, absl::StatusCode::kAlreadyExists, "answered twice");
  expect(1, 1, {0.5f, 0.25f, 0.1f}, absl::StatusCode::kInvalidArgument,
         "evaluation before iteration 7, held-out batch 1 from worker 1");
}

TEST(EvalRound, ARegressionLabelTakesAnyFiniteValueAndIsJudgedByRmse) {
  EvalRound round(3, {2, 1}, 1, {TrainedLabel{"rating", true}});
  EXPECT_NE(round.Accept(0, 0, Bytes({2.0f, INFINITY})).message().find("not a finite number"),
            std::string::npos);
  ASSERT_TRUE(round.Accept(0, 0, Bytes({4.0f, 1.0f})).ok());
  ASSERT_TRUE(round.Accept(0, 1, Bytes({3.5f})).ok());
  const math::LabelMetrics r = round.Compute({3, 3, 3})[0];
  EXPECT_EQ(r.label, "rating");
  EXPECT_TRUE(r.regression);
  EXPECT_EQ(r.samples, 3u);
  EXPECT_EQ(r.rmse, math::RootMeanSquaredError({4, 1, 3.5}, {3, 3, 3}));
}

// Two heads (a model graph's): predictions come sample by sample, head by
// head; each head is judged against its own label column.
TEST(EvalRound, EachHeadIsJudgedAgainstItsOwnLabelColumn) {
  const TrainedLabel rating{"rating", true, /*column=*/1};
  const TrainedLabel click{"click", false, /*column=*/0};
  EvalRound round(5, {2, 1}, 1, {rating, click});
  EXPECT_NE(round.Accept(0, 0, Bytes({4.0f, 0.5f})).message().find("2 samples × 2 head(s)"),
            std::string::npos);
  EXPECT_NE(round.Accept(0, 0, Bytes({4.0f, 1.5f, 2.0f, 0.5f})).message().find("1.5"),
            std::string::npos);  // the click head's prediction is no probability
  ASSERT_TRUE(round.Accept(0, 0, Bytes({4.0f, 0.9f, 2.0f, 0.2f})).ok());
  ASSERT_TRUE(round.Accept(0, 1, Bytes({3.0f, 0.6f})).ok());
  // Labels (click, rating) per sample.
  const EvalResult r = round.Compute({1, 3.5f, 0, 2, 1, 3}, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].label, "rating");
  EXPECT_EQ(r[0].rmse, math::RootMeanSquaredError({4, 2, 3}, {3.5f, 2, 3}));
  EXPECT_EQ(r[1].label, "click");
  EXPECT_EQ(r[1].auc, math::ExactAuc({0.9, 0.2, 0.6}, {1, 0, 1}));
  EXPECT_EQ(r[1].samples, 3u);
}

}  // namespace
}  // namespace herald::scheduler
