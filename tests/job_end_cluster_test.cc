// The end of a job's step stream is not a failure. A job with no held-out
// split and no evaluation has nothing after its last step: the scheduler
// sends the last step while the workers still execute the steps they read
// ahead. Many such short jobs, back to back on one real cluster (scheduler,
// 2 PS shards, 2 workers on 127.0.0.1), herald and vanilla, on 1 and 2
// workers, over gRPC and UCX, of 1 to 40 iterations: every one must succeed
// and equal the single-process reference. Before the fix, the worker called
// off its PS calls when the stream ended, and over UCX nearly every job of
// more than 2 iterations failed in its last iterations ("the scheduler
// ended this job's step stream").
// Also: the scheduler exits promptly on SIGTERM (no job running, workers
// waiting in JoinJob).

#include <signal.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/reference_model.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

// The small job with every sample trained: no held-out split, so no
// evaluation, and nothing follows the last step in the stream.
proto::JobSpec WithoutHeldOut(proto::PolicyKind policy, uint32_t workers, proto::DataPath data_path,
                              uint64_t iterations) {
  proto::JobSpec spec =
      testing::SmallWideAndDeepJob(absl::StrCat(proto::PolicyKind_Name(policy), "-", workers, "w-",
                                                proto::DataPath_Name(data_path), "-", iterations),
                                   policy, iterations);
  spec.mutable_data()->set_eval_fraction(0);
  spec.mutable_data()->set_shuffle_buffer(0);
  spec.clear_eval();
  spec.set_num_workers(workers);
  spec.set_data_path(data_path);
  return spec;
}

class JobEndCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::LocalCluster::Start("job_end", 2, 2);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  // The reference of `iterations` (the same for every policy, worker count
  // and data path), trained once.
  const testing::ReferenceModel& Reference(const proto::JobSpec& spec) {
    auto it = references_.find(spec.iterations());
    if (it == references_.end()) {
      it = references_.emplace(spec.iterations(), testing::TrainReference(spec)).first;
    }
    return it->second;
  }

  std::unique_ptr<testing::LocalCluster> cluster_;
  std::map<uint64_t, testing::ReferenceModel> references_;
};

TEST_F(JobEndCluster, ShortJobsWithoutAHeldOutSplitSucceedAndEqualTheReference) {
  int jobs = 0;
  for (const uint64_t iterations : {1, 2, 3, 5, 9, 17, 40}) {
    for (const proto::DataPath path : {proto::DATA_PATH_UCX, proto::DATA_PATH_GRPC}) {
      for (const proto::PolicyKind policy : {proto::POLICY_HERALD, proto::POLICY_VANILLA}) {
        for (const uint32_t workers : {2u, 1u}) {
          const proto::JobSpec spec = WithoutHeldOut(policy, workers, path, iterations);
          SCOPED_TRACE(spec.name());
          absl::StatusOr<std::string> job = cluster_->Submit(spec);
          ASSERT_TRUE(job.ok()) << job.status();
          const proto::JobStatus done = cluster_->Watch(*job);
          ++jobs;
          ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED)
              << "job " << jobs << ": " << done.reason() << "\n"
              << cluster_->Logs();
          EXPECT_EQ(done.progress().iteration(), iterations);
          const std::string dir = absl::StrCat(cluster_->dir(), "/export-", *job);
          absl::StatusOr<proto::ExportJobResponse> exported = cluster_->Export(*job, dir);
          ASSERT_TRUE(exported.ok()) << exported.status();
          testing::ExpectExportEqualsReference(dir, Reference(spec), iterations);
        }
      }
    }
  }
  EXPECT_EQ(jobs, 56);
  // A worker's stream that ended OK called nothing off: no worker logged it.
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(cluster_->worker(w).LogTail(1 << 22).find("ended this job's step stream"),
              std::string::npos)
        << cluster_->Logs();
  }
}

// With no job running, workers wait in JoinJob (held up to 5 s by the
// scheduler) and a watcher may follow a job: SIGTERM must not wait them out.
TEST_F(JobEndCluster, TheSchedulerExitsPromptlyOnSigterm) {
  const proto::JobSpec spec = WithoutHeldOut(proto::POLICY_HERALD, 2, proto::DATA_PATH_UCX, 2);
  absl::StatusOr<std::string> job = cluster_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(cluster_->Watch(*job).state(), proto::JOB_SUCCEEDED) << cluster_->Logs();
  // The workers are back in JoinJob now (bounded wait for their log line).
  for (int w = 0; w < 2; ++w) {
    for (int i = 0; i < 1000; ++i) {
      if (cluster_->worker(w).LogTail(1 << 20).find("every step done") != std::string::npos) break;
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  cluster_->CloseClient();  // a connected client would be given gRPC's 2 s grace
  const absl::Time start = absl::Now();
  ASSERT_TRUE(cluster_->scheduler().Signal(SIGTERM).ok());
  const absl::StatusOr<int> code = cluster_->scheduler().WaitForExit(20000);
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(code.ok()) << code.status() << cluster_->Logs();
  EXPECT_EQ(*code, 0) << cluster_->Logs();
  std::printf("scheduler exit after SIGTERM: %.0f ms\n", absl::ToDoubleMilliseconds(took));
  // Before, each worker's JoinJob (held up to 5 s) held the exit that long.
  EXPECT_LT(took, absl::Milliseconds(1000)) << cluster_->Logs();
}

}  // namespace
}  // namespace herald
