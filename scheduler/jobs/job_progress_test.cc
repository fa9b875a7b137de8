// JobProgressTracker as plain logic: events and times in, the job's
// counters, history, rate and ETA out.

#include "scheduler/jobs/job_progress.h"

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

PlannedIteration Planned(uint64_t iteration, uint64_t fetched, uint64_t uses, uint64_t hits,
                         bool last = false) {
  PlannedIteration p;
  p.iteration = iteration;
  p.total.fetched = fetched;
  p.total.uses = uses;
  p.total.hits = hits;
  p.plan_ms = 2;
  p.last = last;
  return p;
}

// Plans `planned` and queues its steps to every one of `workers` workers.
void PlanAndQueue(JobProgressTracker& t, const PlannedIteration& planned, uint32_t workers) {
  t.Planned(planned);
  for (uint32_t w = 0; w < workers; ++w) t.Sent(w);
  t.Queued(planned, 1, 0);
}

proto::StepReport Report(uint64_t iteration, double loss_sum, double fetch_ms, uint32_t crc = 0) {
  proto::StepReport r;
  r.set_iteration(iteration);
  r.set_loss_sum(loss_sum);
  r.set_fetch_ms(fetch_ms);
  r.set_compute_ms(10);
  r.set_step_wait_ms(0.25);
  r.set_device_ms(6);
  r.set_dense_crc32(crc);
  return r;
}

TEST(JobProgressTracker, AnIterationCompletesWhenEveryWorkerReportedIt) {
  // 2 workers, global batch 100, 4 iterations named by the spec.
  JobProgressTracker t(2, 100, 4, 64, {}, kStart);
  t.StartAt(0);
  PlanAndQueue(t, Planned(0, 30, 40, 10), 2);
  ASSERT_TRUE(t.Reported(0, Report(0, 20, 1.5), kStart + absl::Seconds(1)).ok());
  EXPECT_EQ(t.Progress().iteration(), 0u);  // worker 1 has not reported
  EXPECT_TRUE(t.History().empty());
  ASSERT_TRUE(t.Reported(1, Report(0, 30, 2.5, 77), kStart + absl::Seconds(2)).ok());
  const proto::JobProgress p = t.Progress();
  EXPECT_EQ(p.iteration(), 1u);
  EXPECT_DOUBLE_EQ(p.loss(), 0.5);  // (20 + 30) / 100
  EXPECT_DOUBLE_EQ(p.worker_fetch_ms(), 4.0);
  EXPECT_DOUBLE_EQ(p.worker_compute_ms(), 20.0);
  EXPECT_DOUBLE_EQ(p.worker_step_wait_ms(), 0.5);  // waiting for the scheduler, both workers
  EXPECT_DOUBLE_EQ(p.worker_device_ms(), 12.0);    // the devices' own time, both workers
  EXPECT_EQ(p.rows_fetched(), 30u);
  EXPECT_EQ(p.rows_moved_vanilla(), 80u);
  EXPECT_DOUBLE_EQ(p.cache_hit_rate(), 0.25);
  EXPECT_DOUBLE_EQ(p.samples_per_second(), 50.0);  // 100 samples in 2 s
  EXPECT_DOUBLE_EQ(p.eta_seconds(), 6.0);          // 3 iterations × 100 / 50
  EXPECT_EQ(p.total_iterations(), 4u);
  const std::vector<proto::HistoryPoint> history = t.History();
  ASSERT_EQ(history.size(), 1u);
  const proto::HistoryPoint& point = history[0];
  EXPECT_EQ(point.rows_fetched(), 30u);
  ASSERT_EQ(point.workers_size(), 2);
  EXPECT_DOUBLE_EQ(point.workers(0).fetch_ms(), 1.5);
  EXPECT_DOUBLE_EQ(point.workers(1).fetch_ms(), 2.5);
  EXPECT_DOUBLE_EQ(point.workers(1).step_wait_ms(), 0.25);
  EXPECT_DOUBLE_EQ(point.workers(1).device_ms(), 6.0);
  EXPECT_EQ(point.unix_ms(), absl::ToUnixMillis(kStart + absl::Seconds(2)));
  EXPECT_EQ(t.final_crcs()[1], 77u);
  EXPECT_EQ(t.Losses(), std::vector<double>({0.5}));
}

TEST(JobProgressTracker, ReportsOutOfOrderOrNotSentAreRefusedNamingTheExpectedIteration) {
  JobProgressTracker t(1, 10, 0, 64, {}, kStart);
  t.StartAt(0);
  t.Planned(Planned(0, 1, 1, 0));
  // Not sent yet: its report would be early.
  absl::Status early = t.Reported(0, Report(0, 1, 1), kStart);
  EXPECT_TRUE(absl::IsInvalidArgument(early));
  t.Sent(0);
  t.Queued(Planned(0, 1, 1, 0), 1, 0);
  PlanAndQueue(t, Planned(1, 1, 1, 0), 1);
  absl::Status skipped = t.Reported(0, Report(1, 1, 1), kStart);
  EXPECT_TRUE(absl::IsInvalidArgument(skipped));
  EXPECT_NE(skipped.message().find("expected iteration 0"), std::string::npos);
  EXPECT_TRUE(t.Reported(0, Report(0, 1, 1), kStart + absl::Seconds(1)).ok());
  EXPECT_TRUE(absl::IsInvalidArgument(t.Reported(0, Report(0, 1, 1), kStart)));  // twice
}

TEST(JobProgressTracker, TheLastPlannedIterationFixesTheTotalAndEndsTheJob) {
  JobProgressTracker t(1, 10, 0, 64, {}, kStart);
  t.StartAt(5);                                    // resumed at iteration 5
  EXPECT_EQ(t.Progress().total_iterations(), 0u);  // unknown until the data ends
  PlanAndQueue(t, Planned(5, 1, 1, 0), 1);
  EXPECT_EQ(t.Progress().iterations_planned(), 6u);
  t.Planned(Planned(6, 1, 1, 0, /*last=*/true));
  t.Sent(0);
  EXPECT_EQ(t.Progress().iterations_planned(), 6u);  // not every step queued yet
  t.Queued(Planned(6, 1, 1, 0, /*last=*/true), 1, 0);
  EXPECT_EQ(t.Progress().total_iterations(), 7u);
  EXPECT_EQ(t.Progress().iterations_planned(), 7u);
  EXPECT_FALSE(t.AllReported());
  ASSERT_TRUE(t.Reported(0, Report(5, 1, 1), kStart + absl::Seconds(1)).ok());
  EXPECT_TRUE(t.HasReported(5));
  EXPECT_FALSE(t.HasReported(6));
  ASSERT_TRUE(t.Reported(0, Report(6, 1, 1), kStart + absl::Seconds(2)).ok());
  EXPECT_TRUE(t.AllReported());
  EXPECT_DOUBLE_EQ(t.Progress().samples_per_second(), 10.0);  // 2 iterations × 10 in 2 s
}

TEST(JobProgressTracker, AnEvaluationIsRecordedInProgressAndHistory) {
  JobProgressTracker t(1, 10, 2, 64, {}, kStart);
  t.StartAt(0);
  PlanAndQueue(t, Planned(0, 1, 1, 0), 1);
  ASSERT_TRUE(t.Reported(0, Report(0, 1, 1), kStart + absl::Seconds(1)).ok());
  EvalResult result(1);
  result[0].label = "click";
  result[0].auc = 0.75;
  result[0].logloss = 0.4;
  result[0].samples = 500;
  t.Evaluated(0, result, 12, kStart + absl::Seconds(2));
  const proto::JobProgress p = t.Progress();
  EXPECT_DOUBLE_EQ(p.eval_auc(), 0.75);
  ASSERT_EQ(p.eval_labels_size(), 1);
  EXPECT_EQ(p.eval_labels(0).label(), "click");
  EXPECT_EQ(p.eval_labels(0).logloss(), 0.4);
  EXPECT_EQ(p.eval_iteration(), 1u);
  EXPECT_EQ(p.eval_samples(), 500u);
  EXPECT_EQ(p.evals_done(), 1u);
  ASSERT_EQ(t.History().size(), 1u);
  EXPECT_DOUBLE_EQ(t.History()[0].eval_auc(), 0.75);
}

}  // namespace
}  // namespace herald::scheduler
