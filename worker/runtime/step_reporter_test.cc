#include "worker/runtime/step_reporter.h"

#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "cluster/testing/fake_scheduler_client.h"
#include "gtest/gtest.h"

namespace herald::worker {
namespace {

using cluster::testing::FakeSchedulerClient;

proto::StepReport Report(uint64_t iteration) {
  proto::StepReport report;
  report.set_iteration(iteration);
  return report;
}

// What on_failure saw.
struct Failures {
  absl::Mutex mu;
  std::vector<uint64_t> iterations ABSL_GUARDED_BY(mu);
  absl::Status last ABSL_GUARDED_BY(mu);
  StepReporter::OnFailure Callback() {
    return [this](uint64_t iteration, const absl::Status& error) {
      absl::MutexLock lock(&mu);
      iterations.push_back(iteration);
      last = error;
    };
  }
};

// Each step's commit runs before its report is sent, steps in order, and
// the report carries the commit's disk reads: a report at the scheduler
// means every shard took that iteration-done report.
TEST(StepReporter, CommitsEachStepBeforeReportingItInOrder) {
  FakeSchedulerClient scheduler;
  Failures failures;
  absl::Mutex mu;
  std::vector<uint64_t> committed;  // in commit order
  std::vector<size_t> reports_seen_at_commit;
  {
    StepReporter reporter(&scheduler, failures.Callback());
    for (uint64_t t = 0; t < 5; ++t) {
      StepReporter::Commit commit = [&, t]() -> absl::StatusOr<ps::PsDiskReads> {
        absl::MutexLock lock(&mu);
        committed.push_back(t);
        reports_seen_at_commit.push_back(scheduler.reports().size());
        return ps::PsDiskReads{t, 2 * t};
      };
      ASSERT_TRUE(reporter.StartCommit(t, commit).ok());
      ASSERT_TRUE(reporter.Submit(Report(t)).ok());
    }
    ASSERT_TRUE(reporter.Flush().ok());
    const std::vector<proto::StepReport> reports = scheduler.reports();
    ASSERT_EQ(reports.size(), 5u);
    for (uint64_t t = 0; t < 5; ++t) {
      EXPECT_EQ(reports[t].iteration(), t);
      EXPECT_EQ(reports[t].ps_disk_rows_critical(), t);
      EXPECT_EQ(reports[t].ps_disk_rows_ahead(), 2 * t);
      EXPECT_GE(reports[t].commit_ms(), 0);
    }
  }
  absl::MutexLock lock(&mu);
  EXPECT_EQ(committed, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  // Step t's commit ran after steps 0..t-1 were reported, before step t was.
  EXPECT_EQ(reports_seen_at_commit, (std::vector<size_t>{0, 1, 2, 3, 4}));
  absl::MutexLock failed(&failures.mu);
  EXPECT_TRUE(failures.iterations.empty());
}

// A commit that fails: its step and every later one stay unreported,
// on_failure hears of it once (naming the iteration), and StartCommit,
// Submit and Flush return the error from then on.
TEST(StepReporter, AFailedCommitStopsReportingAndIsReportedOnce) {
  FakeSchedulerClient scheduler;
  Failures failures;
  StepReporter reporter(&scheduler, failures.Callback());
  ASSERT_TRUE(reporter.Submit(Report(0)).ok());
  ASSERT_TRUE(reporter
                  .StartCommit(1,
                               [] {
                                 return absl::StatusOr<ps::PsDiskReads>(
                                     absl::UnavailableError("shard 1 gone"));
                               })
                  .ok());
  const absl::Status queued = reporter.Submit(Report(1));  // queued, or refused: it failed already
  EXPECT_TRUE(queued.ok() || queued.code() == absl::StatusCode::kUnavailable) << queued;
  const absl::Status flushed = reporter.Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kUnavailable) << flushed;
  EXPECT_NE(flushed.message().find("iteration 1"), std::string::npos) << flushed;
  EXPECT_NE(flushed.message().find("shard 1 gone"), std::string::npos) << flushed;
  EXPECT_EQ(reporter.Submit(Report(2)).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(reporter.StartCommit(2, nullptr).code(), absl::StatusCode::kUnavailable);
  const std::vector<proto::StepReport> reports = scheduler.reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].iteration(), 0u);
  absl::MutexLock lock(&failures.mu);
  EXPECT_EQ(failures.iterations, std::vector<uint64_t>{1});
}

// StartCommit and Submit return while a commit is still running: the step
// after does not wait for it (up to the queue's bound).
TEST(StepReporter, SubmitDoesNotWaitForTheCommit) {
  FakeSchedulerClient scheduler;
  Failures failures;
  absl::Notification release;
  StepReporter reporter(&scheduler, failures.Callback(), /*max_queued=*/3);
  auto held = [&]() -> absl::StatusOr<ps::PsDiskReads> {
    release.WaitForNotification();
    return ps::PsDiskReads{};
  };
  ASSERT_TRUE(reporter.StartCommit(0, held).ok());
  ASSERT_TRUE(reporter.Submit(Report(0)).ok());
  ASSERT_TRUE(reporter.Submit(Report(1)).ok());  // returned: 0's commit still held
  EXPECT_TRUE(scheduler.reports().empty());
  release.Notify();
  ASSERT_TRUE(reporter.Flush().ok());
  EXPECT_EQ(scheduler.reports().size(), 2u);
}

}  // namespace
}  // namespace herald::worker
