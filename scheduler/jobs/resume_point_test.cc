#include "scheduler/jobs/resume_point.h"

#include <fstream>
#include <vector>

#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "common/crc32.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

proto::JobSpec Spec() {
  proto::JobSpec spec;
  spec.add_tables()->set_dim(4);
  spec.set_iterations(20);
  return spec;
}

// A checkpoint of job "ctr" at `iteration` under `dir`: one shard file and,
// when `dense`, dense.bin with 3 parameters and 2 floats of state and
// planner.bin.
void WriteCheckpoint(const std::string& dir, uint64_t iteration, bool dense) {
  const std::string it_dir = checkpoint::CheckpointIterationDir(dir, "ctr", iteration);
  ASSERT_TRUE(checkpoint::MakeDirs(it_dir).ok());
  proto::CheckpointManifest m;
  m.set_job_id("ctr");
  m.set_iteration(iteration);
  m.set_num_shards(1);
  *m.mutable_spec() = Spec();
  data::testing::WriteFile(it_dir + "/" + checkpoint::ShardFileName(0, 1), "rows of shard 0");
  proto::CheckpointShard* shard = m.add_shards();
  shard->set_file(checkpoint::ShardFileName(0, 1));
  shard->set_checksum(*checkpoint::FileCrc32Hex(it_dir + "/" + checkpoint::ShardFileName(0, 1)));
  if (dense) {
    const std::vector<float> floats = {1, 2, 3, float(iteration), 5};
    std::ofstream(it_dir + "/dense.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(floats.data()), floats.size() * sizeof(float));
    m.set_dense_file("dense.bin");
    m.set_dense_floats(3);
    m.set_dense_state_floats(2);
    m.set_dense_checksum(*checkpoint::FileCrc32Hex(it_dir + "/dense.bin"));
    data::testing::WriteFile(it_dir + "/planner.bin", "planner state " + std::to_string(iteration));
    m.set_planner_file("planner.bin");
    m.set_planner_bytes(14 + std::to_string(iteration).size());
    m.set_planner_checksum(*checkpoint::FileCrc32Hex(it_dir + "/planner.bin"));
  }
  ASSERT_TRUE(checkpoint::WriteManifest(dir, m).ok());
}

absl::StatusOr<ResumePoint> Resume(const std::string& from) {
  proto::JobSpec spec = Spec();
  spec.mutable_checkpoint()->set_resume_from(from);
  return ReadResumePoint(spec);
}

TEST(ResumePoint, AJobDirectoryResumesFromItsNewestIntactPeriodicCheckpoint) {
  data::testing::TempDir dir;
  WriteCheckpoint(dir.path(), 4, true);
  WriteCheckpoint(dir.path(), 9, true);
  WriteCheckpoint(dir.path(), 19, false);  // the job's final checkpoint: no dense half
  auto r = Resume(dir.path() + "/ctr");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->manifest, checkpoint::ManifestPath(dir.path(), "ctr", 9));
  EXPECT_EQ(r->first_iteration, 10u);
  EXPECT_EQ(r->job_id, "ctr");
  EXPECT_EQ(r->dense, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(r->dense_state, (std::vector<float>{9, 5}));

  // A damaged shard file: that checkpoint is skipped for the one before it.
  data::testing::WriteFile(checkpoint::CheckpointIterationDir(dir.path(), "ctr", 9) + "/" +
                               checkpoint::ShardFileName(0, 1),
                           "rows of shard 0, bit-flipped");
  r = Resume(dir.path() + "/ctr/");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->first_iteration, 5u);
  EXPECT_EQ(r->dense_state, (std::vector<float>{4, 5}));
  // Named directly, it is refused naming the file.
  r = Resume(checkpoint::ManifestPath(dir.path(), "ctr", 9));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("shard-00000-of-00001.hsf: checksum"), std::string::npos)
      << r.status();
  // So is the final checkpoint, and a directory with nothing intact.
  r = Resume(checkpoint::ManifestPath(dir.path(), "ctr", 19));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("no dense half"), std::string::npos) << r.status();
  std::remove((checkpoint::CheckpointIterationDir(dir.path(), "ctr", 4) + "/dense.bin").c_str());
  r = Resume(dir.path() + "/ctr");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("checkpoint.resume_from"), std::string::npos) << r.status();
}

TEST(ResumePoint, NothingLeftToTrainOrOtherTablesAreRefused) {
  data::testing::TempDir dir;
  WriteCheckpoint(dir.path(), 4, true);
  proto::JobSpec spec = Spec();
  spec.set_iterations(5);
  spec.mutable_checkpoint()->set_resume_from(checkpoint::ManifestPath(dir.path(), "ctr", 4));
  EXPECT_EQ(ReadResumePoint(spec).status().code(), absl::StatusCode::kFailedPrecondition);
  spec.set_iterations(20);
  spec.mutable_tables(0)->set_dim(8);
  auto r = ReadResumePoint(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("table 0 has dim 4"), std::string::npos) << r.status();
}

// The planner file is part of an intact checkpoint: one damaged is skipped
// like a damaged shard file, and ReadPlannerState checks what it reads.
TEST(ResumePoint, ThePlannerFileIsCheckedLikeTheOthers) {
  data::testing::TempDir dir;
  WriteCheckpoint(dir.path(), 4, true);
  WriteCheckpoint(dir.path(), 9, true);
  auto r = Resume(dir.path() + "/ctr");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->planner_file,
            checkpoint::CheckpointIterationDir(dir.path(), "ctr", 9) + "/planner.bin");
  auto bytes = ReadPlannerState(*r);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, "planner state 9");

  data::testing::WriteFile(r->planner_file, "planner state X");
  bytes = ReadPlannerState(*r);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bytes.status().message().find("planner.bin: checksum"), std::string::npos)
      << bytes.status();
  r = Resume(dir.path() + "/ctr");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->first_iteration, 5u);

  data::testing::WriteFile(r->planner_file, "short");
  bytes = ReadPlannerState(*r);
  EXPECT_NE(bytes.status().message().find("5 bytes, the manifest says 15"), std::string::npos)
      << bytes.status();
}

// A final checkpoint with the job's last dense parameters (no optimizer
// state) is skipped by a directory resume and refused when named.
TEST(ResumePoint, AFinalCheckpointWithDenseParametersIsNotResumed) {
  data::testing::TempDir dir;
  WriteCheckpoint(dir.path(), 9, true);
  WriteCheckpoint(dir.path(), 19, true);
  const std::string final_path = checkpoint::ManifestPath(dir.path(), "ctr", 19);
  auto manifest = checkpoint::ReadManifest(final_path);
  ASSERT_TRUE(manifest.ok());
  manifest->set_final(true);
  ASSERT_TRUE(checkpoint::WriteManifest(dir.path(), *manifest).ok());
  auto r = Resume(dir.path() + "/ctr");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->first_iteration, 10u);
  r = Resume(final_path);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("is a job's final checkpoint"), std::string::npos)
      << r.status();
}

TEST(ResumePoint, TheSameTrainingWhereverItsCheckpointsGo) {
  ResumePoint point;
  point.manifest = "/old/ctr/iter-000000000004/MANIFEST";
  point.num_workers = 2;
  point.spec = Spec();
  point.spec.mutable_checkpoint()->set_dir("/old");
  point.spec.mutable_checkpoint()->set_every_iterations(5);
  proto::JobSpec spec = point.spec;
  spec.mutable_checkpoint()->set_dir("/new");
  spec.mutable_checkpoint()->set_keep_last(3);
  spec.mutable_checkpoint()->set_resume_from("/old/ctr");
  EXPECT_TRUE(ContinuesSameTraining(point, spec, 2));
  EXPECT_FALSE(ContinuesSameTraining(point, spec, 3));
  // Checkpoints at other iterations flush at others: other plans.
  spec.mutable_checkpoint()->set_every_iterations(4);
  EXPECT_FALSE(ContinuesSameTraining(point, spec, 2));
  spec = point.spec;
  spec.set_seed(7);
  EXPECT_FALSE(ContinuesSameTraining(point, spec, 2));
}

}  // namespace
}  // namespace herald::scheduler
