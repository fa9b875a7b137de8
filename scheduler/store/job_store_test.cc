#include "scheduler/store/job_store.h"

#include <sqlite3.h>

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

TEST(JobStore, HistorySurvivesReopening) {
  data::testing::TempDir dir;
  StoredJob job = Job(1, proto::JOB_RUNNING);
  for (uint64_t i = 0; i < 3; ++i) {
    proto::HistoryPoint& p = job.history.emplace_back();
    p.set_iteration(i);
    p.set_loss(0.5 + i);
    p.add_workers()->set_fetch_ms(i);
  }
  job.history[2].set_eval_auc(0.75);
  {
    auto store = JobStore::Open(dir.path());
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(job).ok());
  }
  auto store = JobStore::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status();
  auto jobs = (*store)->Load();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  ASSERT_EQ((*jobs)[0].history.size(), 3u);
  EXPECT_EQ((*jobs)[0].history[1].loss(), 1.5);
  EXPECT_EQ((*jobs)[0].history[2].workers(0).fetch_ms(), 2);
  EXPECT_EQ((*jobs)[0].history[2].eval_auc(), 0.75);
  EXPECT_FALSE((*jobs)[0].history[1].has_eval_auc());
}

TEST(JobStore, ADatabaseOfSchema1GainsTheHistoryColumnAndKeepsItsJobs) {
  data::testing::TempDir dir;
  {  // as the previous scheduler wrote it
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.File("scheduler.db").c_str(), &db), SQLITE_OK);
    const std::string progress = Job(3, proto::JOB_SUCCEEDED).progress.SerializeAsString();
    const std::string sql =
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER);"
        "INSERT INTO meta VALUES ('schema', 1);"
        "CREATE TABLE jobs (number INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, spec BLOB NOT "
        "NULL, state INTEGER NOT NULL, reason TEXT NOT NULL, progress BLOB NOT NULL, "
        "submitted_ms INTEGER NOT NULL, finished_ms INTEGER NOT NULL);"
        "INSERT INTO jobs VALUES (3, 'job-3', x'', 3, '', x'', 1003, 2000);";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  auto store = JobStore::Open(dir.path());
  ASSERT_TRUE(store.ok()) << store.status();
  auto jobs = (*store)->Load();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, "job-3");
  EXPECT_EQ((*jobs)[0].state, proto::JOB_SUCCEEDED);
  EXPECT_TRUE((*jobs)[0].history.empty());
  StoredJob later = (*jobs)[0];
  later.history.emplace_back().set_iteration(7);
  ASSERT_TRUE((*store)->Put(later).ok());
  jobs = (*store)->Load();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ((*jobs)[0].history.size(), 1u);
  EXPECT_EQ((*jobs)[0].history[0].iteration(), 7u);
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
