// A checkpoint the storage refuses does not stop training: the job's
// checkpoint directory is a small tmpfs (mounted in a private mount
// namespace this test and the servers it starts share) that fills up after
// a few checkpoints. The job goes on and succeeds with the reference model;
// the refused checkpoints are counted with their error (ENOSPC), leave no
// file behind, and the newest complete checkpoint stays usable: a job
// resumed from it ends with the reference model too.

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "checkpoint/manifest.h"
#include "common/testing/small_tmpfs.h"
#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/process.h"
#include "tests/harness/reference_model.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

constexpr uint64_t kIterations = 40;
// Room for a few of the job's checkpoints (about 150 KiB each), not all.
constexpr const char* kTmpfsSize = "size=640k";

TEST(CheckpointStorage, ACheckpointTheDiskRefusesIsSkippedAndTrainingGoesOn) {
  // Before any thread exists (unshare needs a single-threaded process).
  const std::string dir = testing::MakeTestDir("checkpoint_storage");
  const std::string full = dir + "/small-disk";
  const std::string why = testing::MountSmallTmpfs(full, kTmpfsSize);
  if (!why.empty()) {
    std::printf("SKIPPED (no mount namespaces): %s\n", why.c_str());
    GTEST_SKIP() << why;
  }
  auto cluster = testing::LocalCluster::Start("checkpoint_storage", 2, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  proto::JobSpec spec =
      testing::SmallWideAndDeepJob("small-disk", proto::POLICY_HERALD, kIterations);
  spec.mutable_checkpoint()->set_dir(full);
  spec.mutable_checkpoint()->set_every_iterations(4);
  spec.mutable_checkpoint()->set_keep_last(0);  // every one kept: the disk fills
  const testing::ReferenceModel ref = testing::TrainReference(spec);

  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus done = (*cluster)->Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << (*cluster)->Logs();
  const proto::JobProgress& p = done.progress();
  EXPECT_EQ(p.iteration(), kIterations);
  EXPECT_EQ(done.recoveries(), 0u) << "a full disk is no reason to recover";
  ASSERT_GE(p.checkpoints_written(), 1u) << (*cluster)->Logs();
  ASSERT_GE(p.checkpoint_failures(), 1u) << (*cluster)->Logs();
  EXPECT_NE(p.checkpoint_error().find("No space left on device"), std::string::npos)
      << p.checkpoint_error();
  // heraldctl's status line says so.
  const testing::CommandResult line =
      testing::RunHeraldctl(dir, {"status", *job, "--scheduler=" + (*cluster)->address(),
                                  "--token-file=" + (*cluster)->token_file()});
  EXPECT_NE(line.output.find(absl::StrCat("checkpoints refused ", p.checkpoint_failures(), " (")),
            std::string::npos)
      << line.output;
  // Training was not touched.
  const std::string exported = dir + "/export";
  ASSERT_TRUE((*cluster)->Export(*job, exported).ok());
  testing::ExpectExportEqualsReference(exported, ref, kIterations);

  // Nothing half-written is left: every iteration directory holds a
  // manifest, and no temporary file remains.
  int complete = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(full)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << entry.path();
    if (entry.is_directory() && absl::StartsWith(name, "iter-")) {
      EXPECT_TRUE(std::filesystem::exists(entry.path() / "MANIFEST")) << entry.path();
      ++complete;
    }
  }
  EXPECT_EQ(complete, static_cast<int>(p.checkpoints_written()));

  // The newest complete periodic checkpoint resumes (written elsewhere now).
  auto manifest = checkpoint::ReadManifest(p.last_checkpoint());
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  proto::JobSpec resumed = spec;
  resumed.set_name("resumed");
  resumed.mutable_checkpoint()->Clear();
  resumed.mutable_checkpoint()->set_resume_from(full + "/" + *job);
  auto again = (*cluster)->Submit(resumed);
  ASSERT_TRUE(again.ok()) << again.status();
  const proto::JobStatus resumed_done = (*cluster)->Watch(*again);
  ASSERT_EQ(resumed_done.state(), proto::JOB_SUCCEEDED) << resumed_done.reason();
  EXPECT_FALSE(resumed_done.progress().resumed_from().empty());
  const std::string exported_again = dir + "/export-resumed";
  ASSERT_TRUE((*cluster)->Export(*again, exported_again).ok());
  testing::ExpectExportEqualsReference(exported_again, ref, kIterations);
}

}  // namespace
}  // namespace herald
