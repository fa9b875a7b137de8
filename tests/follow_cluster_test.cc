// Continuous training on a real cluster (data.follow; docs/data-formats.md,
// "Following a directory"): a job follows a directory that this test
// renames files into while the job trains. It trains each file once, in
// name order, and ends after the idle time: its model is the reference
// trainer's on the same files, its chain of periodic increments is its
// whole export, and a job resumed from its checkpoint in the middle of the
// second file continues in that file and ends with the same model.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checkpoint/manifest.h"
#include "common/data/writer.h"
#include "gtest/gtest.h"
#include "scheduler/data/batch_stream.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/reference_model.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

constexpr uint64_t kFiles = 3;
constexpr uint64_t kRowsPerFile = 512;
constexpr uint32_t kBatch = 128;
constexpr uint64_t kIterations = kFiles * kRowsPerFile / kBatch;  // 12

// Writes `files` binary files of generated rows into `staging`
// (part-0.bin, part-1.bin, ...), to be renamed into the followed directory.
void StageFiles(const proto::JobSpec& generated, const std::string& staging, uint64_t files) {
  std::filesystem::create_directories(staging);
  const data::DataSchema schema{generated.num_dense(),
                                static_cast<uint32_t>(generated.tables_size())};
  auto reader = scheduler::OpenDataSource(generated.data(), schema);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (uint64_t f = 0; f < files; ++f) {
    data::SampleBlock block(schema);
    while (block.size() < kRowsPerFile) {
      auto n = (*reader)->Read(kRowsPerFile - block.size(), &block);
      ASSERT_TRUE(n.ok() && *n > 0);
    }
    auto writer = data::OpenWriter("bin", absl::StrCat(staging, "/part-", f, ".bin"), schema);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Write(block).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
}

void RenameIn(const std::string& staging, const std::string& dir, uint64_t f) {
  const std::string name = absl::StrCat("part-", f, ".bin");
  std::filesystem::rename(staging + "/" + name, dir + "/" + name);
}

class FollowCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = testing::LocalCluster::Start("follow", 2, 2);
    ASSERT_TRUE(started.ok()) << started.status();
    cluster_ = std::move(*started);
  }

  // Follows the job until it has planned `iterations` iterations or
  // ended; returns its status then.
  proto::JobStatus WaitUntilPlanned(const std::string& job, uint64_t iterations) {
    return cluster_->Watch(job, [&](const proto::JobStatus& s) {
      return s.progress().iterations_planned() >= iterations;
    });
  }

  std::unique_ptr<testing::LocalCluster> cluster_;
};

TEST_F(FollowCluster, FilesRenamedInAreTrainedOnceAndAResumeContinuesInTheRightFile) {
  testing::GeneratedJob generated;
  generated.rows = kFiles * kRowsPerFile;
  generated.global_batch_size = kBatch;
  generated.eval_fraction = 0;
  generated.shuffle_buffer = 64;
  const std::string staging = cluster_->dir() + "/staging";
  StageFiles(generated.Spec(), staging, kFiles);
  const std::string dir = cluster_->dir() + "/incoming";
  std::filesystem::create_directories(dir);

  proto::JobSpec spec = generated.Spec();
  proto::DataSpec* d = spec.mutable_data();
  d->clear_generator();
  d->set_format(proto::DATA_FORMAT_HERALD_BINARY);
  d->add_paths(dir);
  d->set_follow(true);
  // Long enough for the job to start and this test to rename the next file
  // in before the job gives up on it.
  d->set_follow_idle_seconds(10);
  spec.mutable_checkpoint()->set_dir(cluster_->dir() + "/ckpt");
  spec.mutable_checkpoint()->set_every_iterations(4);
  spec.mutable_checkpoint()->set_keep_last(0);
  spec.mutable_exports()->set_dir(cluster_->dir() + "/exports");
  spec.mutable_exports()->set_every_iterations(4);

  // The job starts with the first file; the next ones arrive while it
  // trains. It waits at the end of what it has: its shuffle pool draws a
  // sample only from a full pool of 64 (so of n samples it makes
  // (n - 63) / 128 batches), and the planner reads two batches ahead.
  // So it plans 1 iteration with the first file, 5 with two.
  RenameIn(staging, dir, 0);
  auto job = cluster_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(WaitUntilPlanned(*job, 1).state(), proto::JOB_RUNNING) << cluster_->Logs();
  RenameIn(staging, dir, 1);
  EXPECT_EQ(WaitUntilPlanned(*job, 5).state(), proto::JOB_RUNNING);
  RenameIn(staging, dir, 2);
  proto::JobStatus done = cluster_->Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << cluster_->Logs();
  EXPECT_EQ(done.progress().iteration(), kIterations) << "every file once";

  // The reference trainer on the same directory, every file there (no
  // need to wait long for another).
  proto::JobSpec all_there = spec;
  all_there.mutable_data()->set_follow_idle_seconds(0.05);
  const testing::ReferenceModel ref = testing::TrainReference(all_there);
  ASSERT_EQ(ref.losses.size(), kIterations);
  const std::string whole = cluster_->dir() + "/whole";
  ASSERT_TRUE(cluster_->Export(*job, whole).ok());
  testing::ExpectExportEqualsReference(whole, ref, kIterations);
  // The periodic increments, read as a chain, are the same model.
  testing::ExpectExportEqualsReference(
      checkpoint::CheckpointIterationDir(cluster_->dir() + "/exports", *job, kIterations - 1), ref,
      kIterations);

  // Resumed from the checkpoint after iteration 7 (the middle of the
  // second file), by its data cursor: the same model at the end.
  proto::JobSpec resumed = all_there;
  resumed.mutable_checkpoint()->set_resume_from(
      checkpoint::ManifestPath(cluster_->dir() + "/ckpt", *job, 7));
  resumed.mutable_checkpoint()->set_dir(cluster_->dir() + "/ckpt-resumed");
  resumed.clear_exports();
  auto again = cluster_->Submit(resumed);
  ASSERT_TRUE(again.ok()) << again.status();
  const proto::JobStatus resumed_done = cluster_->Watch(*again);
  ASSERT_EQ(resumed_done.state(), proto::JOB_SUCCEEDED) << resumed_done.reason();
  EXPECT_EQ(resumed_done.progress().data_resume(), proto::DATA_RESUME_CURSOR);
  EXPECT_EQ(resumed_done.progress().iteration(), kIterations);
  const std::string resumed_whole = cluster_->dir() + "/resumed-whole";
  ASSERT_TRUE(cluster_->Export(*again, resumed_whole).ok());
  testing::ExpectExportEqualsReference(resumed_whole, ref, kIterations);
}

// A cancelled job that waits for its next file ends at once: the wait
// gives up (no idle end here).
TEST_F(FollowCluster, ACancelledJobStopsWaitingForFiles) {
  testing::GeneratedJob generated;
  generated.rows = kRowsPerFile;
  generated.global_batch_size = kBatch;
  generated.eval_fraction = 0;
  generated.shuffle_buffer = 64;
  const std::string staging = cluster_->dir() + "/staging";
  StageFiles(generated.Spec(), staging, 1);
  const std::string dir = cluster_->dir() + "/incoming";
  std::filesystem::create_directories(dir);
  RenameIn(staging, dir, 0);
  proto::JobSpec spec = generated.Spec();
  proto::DataSpec* d = spec.mutable_data();
  d->clear_generator();
  d->set_format(proto::DATA_FORMAT_HERALD_BINARY);
  d->add_paths(dir);
  d->set_follow(true);  // follow_idle_seconds 0: until cancelled
  auto job = cluster_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(WaitUntilPlanned(*job, 1).state(), proto::JOB_RUNNING);
  ASSERT_TRUE(cluster_->Cancel(*job).ok());
  const proto::JobStatus done = cluster_->Watch(*job);
  EXPECT_EQ(done.state(), proto::JOB_CANCELLED) << done.reason();
}

}  // namespace
}  // namespace herald
