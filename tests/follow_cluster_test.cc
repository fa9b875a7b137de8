// Continuous training on a real cluster (data.follow; docs/data-formats.md,
// "Following a directory"): a job follows a directory that this test
// renames files into while the job trains. It trains each file once, in
// name order, and ends after the idle time: its model is the reference
// trainer's on the same files, its chain of periodic increments is its
// whole export, and jobs resumed from its checkpoints (one in the middle of
// the second file) continue in the right file and end with the same
// model. Each file after the first is scored before it trains
// (eval.each_file) with the figures `heraldctl evaluate --data` gives for
// a checkpoint of that iteration, and a resumed job whose first batch
// starts a file scores it first, with the same figures.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checkpoint/manifest.h"
#include "common/data/writer.h"
#include "gtest/gtest.h"
#include "scheduler/data/batch_stream.h"
#include "tests/harness/heraldctl.h"
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

  // `heraldctl evaluate` of the checkpoint of `iteration` on `file`: its
  // AUC and log loss.
  std::pair<double, double> Evaluate(const std::string& checkpoints, const std::string& job,
                                     uint64_t iteration, const std::string& file) {
    const testing::CommandResult r = testing::RunHeraldctl(
        cluster_->dir(),
        {"evaluate", "--model=" + checkpoint::CheckpointIterationDir(checkpoints, job, iteration),
         "--data=" + file, "--json"});
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(testing::JsonNumber(r.output, "samples"), static_cast<double>(kRowsPerFile));
    return {testing::JsonNumber(r.output, "auc"), testing::JsonNumber(r.output, "logloss")};
  }

  // The history's per-file scores: (iteration, files, AUC, log loss).
  struct FileScore {
    uint64_t iteration;
    std::vector<std::string> files;
    double auc, logloss;
  };
  std::vector<FileScore> FileScores(const std::string& job) {
    auto status = cluster_->Status(job, /*include_losses=*/false, /*include_history=*/true);
    EXPECT_TRUE(status.ok()) << status.status();
    std::vector<FileScore> scores;
    if (!status.ok()) return scores;
    for (const proto::HistoryPoint& p : status->history()) {
      if (p.eval_files_size() == 0) continue;
      scores.push_back({p.iteration(),
                        {p.eval_files().begin(), p.eval_files().end()},
                        p.eval_auc(),
                        p.eval_logloss()});
    }
    return scores;
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
  d->set_follow_until_idle_seconds(10);
  spec.mutable_checkpoint()->set_dir(cluster_->dir() + "/ckpt");
  // Not after the iterations the files are scored after (2 and 6): their
  // flushes are eval.each_file's own.
  spec.mutable_checkpoint()->set_every_iterations(2);
  spec.mutable_checkpoint()->set_keep_last(0);
  spec.mutable_exports()->set_dir(cluster_->dir() + "/exports");
  spec.mutable_exports()->set_every_iterations(4);
  spec.mutable_eval()->set_each_file(true);

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
  all_there.mutable_data()->set_follow_until_idle_seconds(0.05);
  const testing::ReferenceModel ref = testing::TrainReference(all_there);
  ASSERT_EQ(ref.losses.size(), kIterations);
  const std::string whole = cluster_->dir() + "/whole";
  ASSERT_TRUE(cluster_->Export(*job, whole).ok());
  testing::ExpectExportEqualsReference(whole, ref, kIterations);
  // The periodic increments, read as a chain, are the same model.
  testing::ExpectExportEqualsReference(
      checkpoint::CheckpointIterationDir(cluster_->dir() + "/exports", *job, kIterations - 1), ref,
      kIterations);

  // Each later file was scored before its first batch trained: part-1
  // starts in batch 3 (the pool of 64 runs dry there), part-2 in batch 7.
  const std::vector<FileScore> scores = FileScores(*job);
  ASSERT_EQ(scores.size(), 2u) << "part-0 trains from batch 0: no model to score it with";
  EXPECT_EQ(scores[0].iteration, 2u);
  EXPECT_EQ(scores[0].files, std::vector<std::string>{"part-1.bin"});
  EXPECT_EQ(scores[1].iteration, 6u);
  EXPECT_EQ(scores[1].files, std::vector<std::string>{"part-2.bin"});
  EXPECT_EQ(done.progress().files_scored(), 2u);
  EXPECT_EQ(done.progress().eval_files(0), "part-2.bin");
  for (const FileScore& score : scores) EXPECT_GT(score.auc, 0.5);  // a trained model's

  // Resumed from the checkpoint after iteration 1 by its data cursor, with
  // a checkpoint after every iteration: the same scores, and they are what
  // `heraldctl evaluate --data` gives for the checkpoints of iterations 2
  // and 6; the same model at the end.
  auto resume = [&](const std::string& from_dir, const std::string& from_job, uint64_t iteration,
                    const std::string& checkpoints) -> std::string {
    proto::JobSpec resumed = all_there;
    resumed.mutable_checkpoint()->set_resume_from(
        checkpoint::ManifestPath(from_dir, from_job, iteration));
    resumed.mutable_checkpoint()->set_dir(checkpoints);
    resumed.mutable_checkpoint()->set_every_iterations(1);
    resumed.clear_exports();
    auto again = cluster_->Submit(resumed);
    EXPECT_TRUE(again.ok()) << again.status();
    if (!again.ok()) return "";
    const proto::JobStatus resumed_done = cluster_->Watch(*again);
    EXPECT_EQ(resumed_done.state(), proto::JOB_SUCCEEDED) << resumed_done.reason();
    EXPECT_NE(resumed_done.progress().data_resume(), proto::DATA_RESUME_READ);
    EXPECT_EQ(resumed_done.progress().iteration(), kIterations);
    const std::string out = cluster_->dir() + "/whole-" + *again;
    EXPECT_TRUE(cluster_->Export(*again, out).ok());
    testing::ExpectExportEqualsReference(out, ref, kIterations);
    return *again;
  };
  const std::string every = cluster_->dir() + "/ckpt-every";
  const std::string b = resume(cluster_->dir() + "/ckpt", *job, 1, every);
  ASSERT_FALSE(b.empty());
  const std::vector<FileScore> b_scores = FileScores(b);
  ASSERT_EQ(b_scores.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(absl::StrCat("part-", i + 1));
    EXPECT_EQ(b_scores[i].iteration, scores[i].iteration);
    EXPECT_EQ(b_scores[i].files, scores[i].files);
    // Another plan (a fresh planner fetching every row, a flush after every
    // iteration): the same model within float rounding. Without the
    // flush before the file, the job would score rows its caches had
    // trained and not written back.
    std::printf("part-%zu: AUC %.17g / %.17g, log loss %.17g / %.17g\n", i + 1, scores[i].auc,
                b_scores[i].auc, scores[i].logloss, b_scores[i].logloss);
    EXPECT_NEAR(b_scores[i].auc, scores[i].auc, 1e-4);
    EXPECT_NEAR(b_scores[i].logloss, scores[i].logloss, 1e-6);
    const auto [auc, logloss] =
        Evaluate(every, b, scores[i].iteration, absl::StrCat(dir, "/", scores[i].files[0]));
    EXPECT_EQ(auc, b_scores[i].auc);
    EXPECT_EQ(logloss, b_scores[i].logloss);
  }

  // Resumed from the checkpoint after iteration 6 (the middle of the
  // second file): its first batch starts part-2, which it scores first,
  // with the job's figures.
  const std::string c = resume(every, b, 6, cluster_->dir() + "/ckpt-c");
  ASSERT_FALSE(c.empty());
  const std::vector<FileScore> c_scores = FileScores(c);
  ASSERT_EQ(c_scores.size(), 1u);
  EXPECT_EQ(c_scores[0].iteration, 6u);
  EXPECT_EQ(c_scores[0].files, std::vector<std::string>{"part-2.bin"});
  EXPECT_EQ(c_scores[0].auc, b_scores[1].auc);  // the same training as b's: its bits
  EXPECT_EQ(c_scores[0].logloss, b_scores[1].logloss);
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
  d->set_follow(true);  // follow_until_idle_seconds 0: until cancelled
  auto job = cluster_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(WaitUntilPlanned(*job, 1).state(), proto::JOB_RUNNING);
  ASSERT_TRUE(cluster_->Cancel(*job).ok());
  const proto::JobStatus done = cluster_->Watch(*job);
  EXPECT_EQ(done.state(), proto::JOB_CANCELLED) << done.reason();
}

}  // namespace
}  // namespace herald
