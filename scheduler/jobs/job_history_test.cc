#include "scheduler/jobs/job_history.h"

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

// One binary label's metrics.
std::vector<proto::LabelMetrics> Binary(double auc, double logloss) {
  proto::LabelMetrics m;
  m.set_label("label");
  m.set_auc(auc);
  m.set_logloss(logloss);
  return {m};
}

proto::HistoryPoint Point(uint64_t iteration) {
  proto::HistoryPoint p;
  p.set_iteration(iteration);
  p.set_loss(1.0 / (iteration + 1));
  return p;
}

TEST(JobHistory, KeepsEveryIterationUpToItsCapacity) {
  JobHistory h(8);
  for (uint64_t i = 0; i < 8; ++i) h.Add(Point(i));
  ASSERT_EQ(h.points().size(), 8u);
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(h.points()[i].iteration(), i);
  EXPECT_EQ(h.stride(), 1u);
}

TEST(JobHistory, AnyLengthFitsEvenlySpacedAndRecent) {
  JobHistory h(8);
  for (uint64_t i = 0; i < 1000; ++i) {
    h.Add(Point(i));
    ASSERT_LE(h.points().size(), 8u) << "after iteration " << i;
    // Evenly spaced from 0, the newest at most one stride behind.
    for (size_t k = 0; k < h.points().size(); ++k) {
      EXPECT_EQ(h.points()[k].iteration(), k * h.stride());
    }
    EXPECT_LT(i - h.points().back().iteration(), h.stride());
  }
  EXPECT_EQ(h.stride(), 128u);                           // 1000 iterations in at most 8 points
  EXPECT_EQ(h.points()[3].loss(), 1.0 / (3 * 128 + 1));  // each point is its iteration's
}

TEST(JobHistory, EvaluationsSurviveThinningAndMergeIntoTheirIteration) {
  JobHistory h(16);
  for (uint64_t i = 0; i < 100; ++i) {
    h.Add(Point(i));
    if ((i + 1) % 10 == 0) h.AddEval(i, 1000 + i, Binary(0.5 + i / 1000.0, 0.7 - i / 1000.0));
  }
  // Stride 8 now: iterations 0, 8, ..., 96 kept; evaluations after 9, 19,
  // ..., 99 all kept, none of them at a kept iteration.
  const std::vector<proto::HistoryPoint> points = h.points();
  std::vector<uint64_t> evaluated;
  for (size_t k = 0; k < points.size(); ++k) {
    if (k > 0) {
      EXPECT_LT(points[k - 1].iteration(), points[k].iteration());
    }
    if (!points[k].has_eval_auc()) continue;
    evaluated.push_back(points[k].iteration());
    EXPECT_EQ(points[k].eval_auc(), 0.5 + points[k].iteration() / 1000.0);
    EXPECT_EQ(points[k].eval_logloss(), 0.7 - points[k].iteration() / 1000.0);
    EXPECT_EQ(points[k].unix_ms(), static_cast<int64_t>(1000 + points[k].iteration()));
  }
  EXPECT_EQ(evaluated, (std::vector<uint64_t>{9, 19, 29, 39, 49, 59, 69, 79, 89, 99}));
  EXPECT_EQ(points.size(), 13u + 10u);
}

TEST(JobHistory, AnEvaluationAtAKeptIterationSetsThatPoint) {
  JobHistory h(8);
  for (uint64_t i = 0; i < 4; ++i) h.Add(Point(i));
  h.AddEval(3, 0, Binary(0.75, 0.5));
  const std::vector<proto::HistoryPoint> points = h.points();
  ASSERT_EQ(points.size(), 4u);
  EXPECT_FALSE(points[2].has_eval_auc());
  EXPECT_EQ(points[3].eval_auc(), 0.75);
  EXPECT_EQ(points[3].loss(), 1.0 / 4);  // the training values stay
}

TEST(JobHistory, EvaluationsAreBoundedToo) {
  JobHistory h(8);
  for (uint64_t i = 0; i < 1000; ++i) {
    h.AddEval(i, 0, Binary(0.5, 0.5));
    ASSERT_LE(h.points().size(), 8u) << "after evaluation " << i;
  }
  EXPECT_EQ(h.points().back().iteration(), 999u);  // the newest is always kept
}

TEST(JobHistory, AResumedRunContinuesTheHistoryAndReplacesWhatItTrainsAgain) {
  auto trained = [](uint64_t i, double loss) {
    proto::HistoryPoint p = Point(i);
    p.set_loss(loss);
    p.add_workers();
    return p;
  };
  JobHistory first(8);
  for (uint64_t i = 0; i < 7; ++i) first.Add(trained(i, 1));
  first.AddEval(3, 0, Binary(0.6, 0.4));
  first.AddEval(5, 0, Binary(0.7, 0.3));
  // The resumed run: from the checkpoint after iteration 3.
  JobHistory resumed(8);
  resumed.Continue(first.points());
  ASSERT_EQ(resumed.points().size(), 7u);
  resumed.Add(trained(4, 2));
  resumed.AddEval(4, 0, Binary(0.65, 0.35));
  const std::vector<proto::HistoryPoint> points = resumed.points();
  ASSERT_EQ(points.size(), 5u);  // 0..4: 5 and 6 are trained again
  EXPECT_EQ(points[3].loss(), 1);
  EXPECT_EQ(points[3].eval_auc(), 0.6);  // the first run's evaluation after 3 stays
  EXPECT_EQ(points[4].loss(), 2);
  EXPECT_EQ(points[4].eval_auc(), 0.65);  // the one after 5 is gone
}

TEST(JobHistory, EvaluationsKeepEachLabelsMetricsAndReadHistoriesStoredBefore) {
  JobHistory h(8);
  proto::HistoryPoint trained;
  trained.set_iteration(2);
  trained.add_workers();
  h.Add(trained);
  proto::LabelMetrics rating;
  rating.set_label("rating");
  rating.set_regression(true);
  rating.set_rmse(1.25);
  h.AddEval(2, 0, {rating});
  std::vector<proto::HistoryPoint> points = h.points();
  ASSERT_EQ(points.size(), 1u);
  ASSERT_TRUE(JobHistory::HasEval(points[0]));
  EXPECT_FALSE(points[0].has_eval_auc());  // no binary label
  ASSERT_EQ(points[0].eval_labels_size(), 1);
  EXPECT_EQ(points[0].eval_labels(0).rmse(), 1.25);
  // A point stored before eval_labels: its AUC and log loss are label's.
  proto::HistoryPoint old;
  old.set_iteration(3);
  old.set_eval_auc(0.7);
  old.set_eval_logloss(0.4);
  h.Continue({old});
  points = h.points();
  ASSERT_EQ(points.size(), 2u);
  ASSERT_EQ(points[1].eval_labels_size(), 1);
  EXPECT_EQ(points[1].eval_labels(0).label(), "label");
  EXPECT_EQ(points[1].eval_labels(0).auc(), 0.7);
  EXPECT_EQ(points[1].eval_auc(), 0.7);
}

}  // namespace
}  // namespace herald::scheduler
