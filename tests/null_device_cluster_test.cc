// The null device in a real cluster, as bench/pipeline_bench runs it:
// herald_worker_with_test_hooks --device null trains a job to its end over
// the real scheduler, PS shards and transports while doing no arithmetic
// (every loss is 0, the dense replicas agree), and reports the time it
// waited for the scheduler's steps.

#include "gtest/gtest.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/small_job.h"

namespace herald::testing {
namespace {

TEST(NullDeviceCluster, AJobRunsItsPipelineToTheEndWithoutArithmetic) {
  ClusterFlags flags;
  flags.worker_binary = "worker/herald_worker_with_test_hooks";
  auto cluster = LocalCluster::Start("null_device", 2, 2, nullptr, {"null", "null"}, flags);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  LocalCluster& c = **cluster;
  proto::JobSpec spec = SmallWideAndDeepJob("null-device", proto::POLICY_HERALD, 8);
  spec.mutable_data()->set_eval_fraction(0);
  absl::StatusOr<std::string> job = c.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus end = c.Watch(*job);
  ASSERT_EQ(end.state(), proto::JOB_SUCCEEDED) << end.reason() << c.Logs();
  EXPECT_EQ(end.progress().iteration(), 8u);
  EXPECT_EQ(end.progress().loss(), 0.0);         // no arithmetic: no loss
  EXPECT_GT(end.progress().rows_fetched(), 0u);  // the pipeline around the device ran
  absl::StatusOr<proto::JobStatus> status = c.Status(*job, true, true);
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_EQ(status->history_size(), 8);
  for (const proto::HistoryPoint& point : status->history()) {
    EXPECT_EQ(point.loss(), 0.0);
    ASSERT_EQ(point.workers_size(), 2);
    for (const proto::WorkerPhases& w : point.workers()) EXPECT_GE(w.step_wait_ms(), 0);
  }
}

}  // namespace
}  // namespace herald::testing
