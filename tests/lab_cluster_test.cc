// The real binaries on emulated hosts (deploy/lab/lab.sh): the scheduler and
// PS shard 0 on host 1, a worker on each of hosts 2 and 3, PS shard 1 on
// host 4, each with its own address and a 1 Gb/s NIC. Nothing runs on
// 127.0.0.1, so whatever assumes it (listen or advertised addresses, Gloo,
// port files) breaks here.
//   - A job trains to the single-process reference's model (exported with
//     heraldctl and compared as the exactness tests do).
//   - A host whose link goes down mid-job is found dead by the heartbeat
//     within the liveness timeout, and the job fails naming that host.
// Needs root and network namespaces; elsewhere every test prints
// "SKIPPED (no network namespaces): reason" and skips.

#include "tests/harness/lab_cluster.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/harness/reference_model.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

constexpr uint64_t kIterations = 12;
constexpr int kLivenessTimeoutMs = 3000;

proto::JobSpec Spec(uint64_t iterations) {
  testing::GeneratedJob job;
  job.name = "lab";
  job.seed = 11;
  job.dim = 8;
  job.rows = 6000;
  job.data_seed = 3;
  job.shuffle_buffer = 512;
  job.global_batch_size = 128;
  job.iterations = iterations;
  proto::JobSpec spec = job.Spec();
  // Every exact option on: rows also cross between the worker hosts.
  proto::SchedulingSpec* scheduling = spec.mutable_scheduling();
  scheduling->set_handoff(true);
  scheduling->set_serve(true);
  scheduling->set_init_on_worker(true);
  return spec;
}

class LabClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = testing::LabCluster::UnavailableReason();
    if (!why.empty()) GTEST_SKIP() << "SKIPPED (no network namespaces): " << why;
    testing::LabLayout layout;
    layout.liveness_timeout_ms = kLivenessTimeoutMs;
    auto lab = testing::LabCluster::Start("hlt", layout);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = std::move(*lab);
  }

  std::unique_ptr<testing::LabCluster> lab_;
};

TEST_F(LabClusterTest, AJobAcrossHostsTrainsTheReferenceModel) {
  const proto::JobSpec spec = Spec(kIterations);
  const testing::ReferenceModel ref = testing::TrainReference(spec);
  ASSERT_EQ(ref.losses.size(), kIterations);
  auto job = lab_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  testing::CommandResult watch = lab_->Ctl({"watch", *job});
  ASSERT_EQ(watch.code, 0) << watch.output << lab_->Logs();
  auto status = lab_->Status(*job);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->state(), proto::JOB_SUCCEEDED);
  // Rows really crossed hosts: fetched from both PS hosts, handed between
  // the worker hosts.
  EXPECT_GT(status->progress().rows_fetched(), 0u);
  EXPECT_GT(status->progress().rows_handed_off(), 0u);
  // Over the emulated network, never around it: hosts are network
  // namespaces of one machine, where shared memory would reach.
  const std::string logs = lab_->Logs();
  EXPECT_NE(logs.find("0 over shared memory"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("1 over shared memory"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("2 over shared memory"), std::string::npos) << logs;
  const std::string dir = lab_->dir() + "/export";
  testing::CommandResult exported = lab_->Ctl({"export", *job, "--out", dir});
  ASSERT_EQ(exported.code, 0) << exported.output;
  testing::ExpectExportEqualsReference(dir, ref, kIterations);
}

TEST_F(LabClusterTest, AHostWhoseLinkGoesDownIsFoundDeadAndNamed) {
  auto job = lab_->Submit(Spec(/*iterations=*/1000000));
  ASSERT_TRUE(job.ok()) << job.status();
  // Bounded wait until the job trains (both workers joined).
  absl::StatusOr<proto::JobStatus> status;
  for (int i = 0; i < 300; ++i) {
    status = lab_->Status(*job);
    ASSERT_TRUE(status.ok()) << status.status();
    if (status->progress().iteration() >= 2) break;
    absl::SleepFor(absl::Milliseconds(100));  // poll interval
  }
  ASSERT_GE(status->progress().iteration(), 2u) << lab_->Logs();
  const std::string lost = lab_->HostAddress(3);  // worker 1's host
  const absl::Time down = absl::Now();
  ASSERT_TRUE(lab_->LinkDown(3).ok());
  testing::CommandResult watch = lab_->Ctl({"watch", *job});
  const absl::Duration detected = absl::Now() - down;
  EXPECT_NE(watch.code, 0);
  status = lab_->Status(*job);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->state(), proto::JOB_FAILED);
  EXPECT_NE(status->reason().find(lost), std::string::npos) << status->reason();
  // The liveness timeout plus a heartbeat period and the scheduler's poll.
  EXPECT_LE(detected, absl::Milliseconds(kLivenessTimeoutMs + 2000)) << status->reason();
  std::printf("link of %s down: job failed after %.2f s (liveness timeout %.1f s): %s\n",
              lost.c_str(), absl::ToDoubleSeconds(detected), kLivenessTimeoutMs / 1000.0,
              status->reason().c_str());
}

// lab.sh stop (the benches' way to run a second build in the same lab):
// the cluster's processes are gone, the hosts stay.
TEST_F(LabClusterTest, StopKillsTheProcessesAndKeepsTheHosts) {
  ASSERT_EQ(lab_->Ctl({"nodes"}).code, 0);
  ASSERT_TRUE(lab_->StopProcesses().ok());
  testing::CommandResult nodes = lab_->Ctl({"nodes"});
  EXPECT_NE(nodes.code, 0) << nodes.output;  // no scheduler answers
  testing::CommandResult version = lab_->Ctl({"--version"});
  EXPECT_EQ(version.code, 0) << version.output;  // host 1 is still there
}

}  // namespace
}  // namespace herald
