#include "scheduler/service/job_store.h"

#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

StoredJob Job(uint64_t n, proto::JobState state) {
  StoredJob j;
  j.number = n;
  j.id = "job-" + std::to_string(n);
  j.spec.set_name("ctr-" + std::to_string(n));
  j.spec.set_global_batch_size(64);
  j.state = state;
  j.progress.set_iteration(10 * n);
  j.submitted_unix_ms = 1000 + n;
  return j;
}

TEST(JobStore, JobsSurviveReopeningInSubmissionOrder) {
  data::testing::TempDir dir;
  {
    auto store = JobStore::Open(dir.path() + "/state");
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(Job(2, proto::JOB_QUEUED)).ok());
    ASSERT_TRUE((*store)->Put(Job(1, proto::JOB_RUNNING)).ok());
    StoredJob done = Job(1, proto::JOB_FAILED);  // a change of state replaces the row
    done.reason = "worker-1 stopped heartbeating";
    done.finished_unix_ms = 5000;
    ASSERT_TRUE((*store)->Put(done).ok());
  }
  auto store = JobStore::Open(dir.path() + "/state");
  ASSERT_TRUE(store.ok()) << store.status();
  auto jobs = (*store)->Load();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, "job-1");
  EXPECT_EQ((*jobs)[0].state, proto::JOB_FAILED);
  EXPECT_EQ((*jobs)[0].reason, "worker-1 stopped heartbeating");
  EXPECT_EQ((*jobs)[0].finished_unix_ms, 5000);
  EXPECT_EQ((*jobs)[0].progress.iteration(), 10u);
  EXPECT_EQ((*jobs)[1].id, "job-2");
  EXPECT_EQ((*jobs)[1].spec.name(), "ctr-2");
  EXPECT_EQ((*jobs)[1].spec.global_batch_size(), 64u);
  EXPECT_EQ((*jobs)[1].state, proto::JOB_QUEUED);
}

TEST(JobStore, AFileThatIsNotADatabaseIsRefusedNamingIt) {
  data::testing::TempDir dir;
  data::testing::WriteFile(dir.File("scheduler.db"), std::string(4096, 'x'));
  auto store = JobStore::Open(dir.path());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(store.status().message().find(dir.File("scheduler.db")), std::string::npos)
      << store.status();
}

TEST(JobStore, ADirectoryThatCannotBeMadeIsNamed) {
  data::testing::TempDir dir;
  data::testing::WriteFile(dir.File("file"), "x");
  auto store = JobStore::Open(dir.File("file") + "/state");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("cannot create"), std::string::npos) << store.status();
}

}  // namespace
}  // namespace herald::scheduler
