// A scheduler with --state_dir remembers its jobs across a SIGKILL: queued
// jobs stay queued (and job ids go on), ended ones are listed as they
// ended, and a job that was running resumes from its newest periodic
// checkpoint once the nodes register again. Real processes, real SQLite file, heraldctl as a user.

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/process.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

// One herald_scheduler on 127.0.0.1 with the cluster token and `state_dir`.
struct Scheduler {
  std::unique_ptr<testing::ChildProcess> process;
  std::string address;
};

Scheduler StartScheduler(const std::string& dir, const std::string& state_dir,
                         const std::string& token_file, const std::string& name,
                         const std::string& listen = "127.0.0.1:0") {
  Scheduler s;
  const std::string port_file = dir + "/" + name + ".port";
  auto p = testing::ChildProcess::Start(testing::RunfilePath("scheduler/herald_scheduler"),
                                        {"--listen=" + listen, "--port_file=" + port_file,
                                         "--state_dir=" + state_dir, "--token_file=" + token_file},
                                        dir + "/" + name + ".log");
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return s;
  auto port = (*p)->WaitForPortFile(port_file, 20000);
  EXPECT_TRUE(port.ok()) << port.status();
  s.address = absl::StrCat("127.0.0.1:", port.ok() ? *port : 0);
  s.process = std::move(*p);
  return s;
}

void Kill(testing::ChildProcess& p) {
  ASSERT_TRUE(p.Signal(SIGKILL).ok());
  auto code = p.WaitForExit(20000);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGKILL);
}

class SchedulerRestart : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("scheduler_restart");
    token_file_ = dir_ + "/token";
    std::ofstream(token_file_) << testing::LocalCluster::kToken << "\n";
  }
  testing::CommandResult Ctl(const std::string& address, std::vector<std::string> args) {
    args.insert(args.end(), {"--scheduler=" + address, "--token-file=" + token_file_});
    return testing::RunHeraldctl(dir_, args);
  }
  std::string SpecFile(const proto::JobSpec& spec) {
    std::string text;
    google::protobuf::TextFormat::PrintToString(spec, &text);
    const std::string path = dir_ + "/" + spec.name() + ".txt";
    std::ofstream(path) << text;
    return path;
  }
  // Submits `name`, `iterations` long and checkpointed every 5 iterations
  // under dir_/ckpt, and waits (a bounded poll) until its first checkpoint
  // is written. Returns the job id; empty after a failure (reported).
  std::string SubmitAndWaitForACheckpoint(testing::LocalCluster& cluster, const std::string& name,
                                          int iterations) {
    proto::JobSpec spec = testing::SmallWideAndDeepJob(name, proto::POLICY_HERALD, iterations);
    spec.mutable_checkpoint()->set_dir(dir_ + "/ckpt");
    spec.mutable_checkpoint()->set_every_iterations(5);
    auto id = cluster.Submit(spec);
    if (!id.ok()) {
      ADD_FAILURE() << id.status();
      return "";
    }
    proto::JobStatus seen;
    for (int i = 0; i < 3000 && seen.progress().checkpoints_written() == 0; ++i) {
      auto s = cluster.Status(*id, /*include_losses=*/false);
      if (!s.ok()) {
        ADD_FAILURE() << s.status();
        return "";
      }
      seen = *s;
      if (seen.progress().checkpoints_written() == 0) absl::SleepFor(absl::Milliseconds(5));
    }
    if (seen.state() != proto::JOB_RUNNING) {
      ADD_FAILURE() << proto::JobState_Name(seen.state()) << ": " << seen.reason()
                    << cluster.Logs();
      return "";
    }
    return *id;
  }
  // The scheduler at `address`, restarted while job `id` ran, resumed it:
  // it ended well after all `iterations`, recovered once for the restart.
  // Returns its status as JSON.
  std::string ExpectResumedAfterTheRestart(const std::string& address, const std::string& id,
                                           int iterations, const std::string& logs) {
    testing::CommandResult watched = Ctl(address, {"watch", id});
    EXPECT_EQ(watched.code, 0) << watched.output << logs;
    testing::CommandResult status = Ctl(address, {"status", id, "--json"});
    EXPECT_NE(status.output.find("\"state\":\"JOB_SUCCEEDED\""), std::string::npos)
        << status.output;
    EXPECT_NE(status.output.find(absl::StrCat("\"iteration\":\"", iterations, "\"")),
              std::string::npos)
        << status.output;
    EXPECT_NE(status.output.find("\"recoveries\":1"), std::string::npos) << status.output << logs;
    EXPECT_NE(status.output.find("the scheduler restarted while the job ran"), std::string::npos)
        << status.output;
    return status.output;
  }
  std::string dir_, token_file_;
};

testing::ClusterFlags StateDir(const std::string& dir) {
  testing::ClusterFlags flags;
  flags.scheduler = {"--state_dir=" + dir};
  return flags;
}

TEST_F(SchedulerRestart, QueuedJobsStayQueuedAndIdsGoOn) {
  const std::string state = dir_ + "/state";
  Scheduler first = StartScheduler(dir_, state, token_file_, "first");
  ASSERT_NE(first.process, nullptr);
  // No PS or worker is registered: both jobs wait in the queue.
  for (const char* name : {"a", "b"}) {
    testing::CommandResult submitted =
        Ctl(first.address,
            {"submit", SpecFile(testing::SmallWideAndDeepJob(name, proto::POLICY_HERALD, 4))});
    ASSERT_EQ(submitted.code, 0) << submitted.output;
  }
  Kill(*first.process);

  Scheduler second = StartScheduler(dir_, state, token_file_, "second");
  ASSERT_NE(second.process, nullptr);
  testing::CommandResult status = Ctl(second.address, {"status"});
  ASSERT_EQ(status.code, 0) << status.output;
  EXPECT_NE(status.output.find("job-1 a"), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("job-2 b"), std::string::npos) << status.output;
  EXPECT_EQ(status.output.find("RUNNING"), std::string::npos) << status.output;
  size_t queued = 0;
  for (size_t at = 0; (at = status.output.find("JOB_QUEUED", at)) != std::string::npos; ++at) {
    ++queued;
  }
  EXPECT_EQ(queued, 2u) << status.output;
  testing::CommandResult third =
      Ctl(second.address,
          {"submit", SpecFile(testing::SmallWideAndDeepJob("c", proto::POLICY_HERALD, 4))});
  ASSERT_EQ(third.code, 0) << third.output;
  EXPECT_EQ(absl::StripAsciiWhitespace(third.output), "job-3");
  // A cancelled job is recorded as cancelled too.
  ASSERT_EQ(Ctl(second.address, {"cancel", "job-1"}).code, 0);
  Kill(*second.process);
  Scheduler last = StartScheduler(dir_, state, token_file_, "last");
  testing::CommandResult after = Ctl(last.address, {"status", "job-1"});
  EXPECT_NE(after.output.find("JOB_CANCELLED"), std::string::npos) << after.output;
}

// The files of two exports of job `job` are the same bytes: the dense
// parameters and every shard file.
void ExpectSameExport(const std::string& a, const std::string& b, const std::string& job) {
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_FALSE(read(a + "/dense.f32").empty());
  EXPECT_EQ(read(a + "/dense.f32"), read(b + "/dense.f32"));
  int shard_files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(a + "/" + job)) {
    if (entry.path().extension() != ".hsf") continue;
    ++shard_files;
    const std::string relative = std::filesystem::relative(entry.path(), a).string();
    EXPECT_EQ(read(a + "/" + relative), read(b + "/" + relative)) << relative;
  }
  EXPECT_GT(shard_files, 0);
  EXPECT_TRUE(std::ifstream(b + "/MODEL").good());
}

TEST_F(SchedulerRestart, EndedJobsAreListedAndARunningOneResumesFromItsCheckpoint) {
  const std::string state = dir_ + "/state";
  auto cluster =
      testing::LocalCluster::Start("restart_cluster", 1, 2, nullptr, {}, StateDir(state));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  // A job with a checkpoint directory (its final checkpoint keeps it
  // exportable), exported while the PS shards hold its tables; then one
  // without, which drops them.
  proto::JobSpec done_spec = testing::SmallWideAndDeepJob("done", proto::POLICY_HERALD, 5);
  done_spec.mutable_checkpoint()->set_dir(dir_ + "/ckpt-done");
  auto done = (*cluster)->Submit(done_spec);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ((*cluster)->Watch(*done).state(), proto::JOB_SUCCEEDED) << (*cluster)->Logs();
  ASSERT_TRUE((*cluster)->Export(*done, dir_ + "/m-live").ok());
  auto lost = (*cluster)->Submit(testing::SmallWideAndDeepJob("lost", proto::POLICY_HERALD, 3));
  ASSERT_TRUE(lost.ok()) << lost.status();
  ASSERT_EQ((*cluster)->Watch(*lost).state(), proto::JOB_SUCCEEDED) << (*cluster)->Logs();
  // Its tables dropped from the shards, the first exports from its final checkpoint.
  ASSERT_TRUE((*cluster)->Export(*done, dir_ + "/m-dropped").ok()) << (*cluster)->Logs();
  ExpectSameExport(dir_ + "/m-live", dir_ + "/m-dropped", *done);
  const std::string running = SubmitAndWaitForACheckpoint(**cluster, "long", 50);
  ASSERT_FALSE(running.empty());
  // A user watching the job: heraldctl watch rides through the restart
  // (its scheduler unreachable for a while) and ends with the job's end.
  auto watcher = testing::ChildProcess::Start(
      testing::RunfilePath("cli/heraldctl"),
      {"watch", running, "--scheduler=" + (*cluster)->address(), "--token-file=" + token_file_},
      dir_ + "/watch-across-restart.log");
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  Kill((*cluster)->scheduler());
  // No scheduler at the address: a heraldctl call waits for one a while,
  // then fails naming the address; one started meanwhile answers it.
  testing::CommandResult down = Ctl((*cluster)->address(), {"status", *done});
  EXPECT_EQ(down.code, 1) << down.output;
  EXPECT_NE(down.output.find("no scheduler accepted a connection at " + (*cluster)->address()),
            std::string::npos)
      << down.output;
  auto early = testing::ChildProcess::Start(
      testing::RunfilePath("cli/heraldctl"),
      {"status", *done, "--scheduler=" + (*cluster)->address(), "--token-file=" + token_file_},
      dir_ + "/status-before-restart.log");
  ASSERT_TRUE(early.ok()) << early.status();
  ASSERT_TRUE((*early)->WaitForLog("no scheduler listens at", 20000).ok()) << (*early)->LogTail();

  // The same address: the nodes register again with the new scheduler.
  Scheduler again = StartScheduler(dir_, state, token_file_, "again", (*cluster)->address());
  ASSERT_NE(again.process, nullptr);
  absl::StatusOr<int> early_exit = (*early)->WaitForExit(30000);
  ASSERT_TRUE(early_exit.ok()) << early_exit.status() << (*early)->LogTail();
  EXPECT_EQ(*early_exit, 0) << (*early)->LogTail();
  EXPECT_NE((*early)->LogTail().find("JOB_SUCCEEDED"), std::string::npos) << (*early)->LogTail();
  testing::CommandResult first = Ctl(again.address, {"status", *done});
  EXPECT_NE(first.output.find("JOB_SUCCEEDED"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("iter 5/5"), std::string::npos) << first.output;
  // Its history too: a row per iteration, the evaluation at its end on the last.
  testing::CommandResult history = Ctl(again.address, {"status", *done, "--history", "--csv"});
  std::vector<std::string> rows =
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(history.output), '\n');
  ASSERT_EQ(rows.size(), 1u + 5) << history.output;
  EXPECT_TRUE(absl::StartsWith(rows[1], "0,")) << history.output;
  EXPECT_FALSE(absl::StrContains(rows[5], ",,"))
      << "no evaluation after the last iteration: " << rows[5];
  // It stays exportable across the restart (from its final checkpoint);
  // the job without a checkpoint directory does not.
  testing::CommandResult exported =
      Ctl(again.address, {"export", *done, "--out=" + dir_ + "/m-restarted"});
  EXPECT_EQ(exported.code, 0) << exported.output;
  ExpectSameExport(dir_ + "/m-live", dir_ + "/m-restarted", *done);
  exported = Ctl(again.address, {"export", *lost, "--out=" + dir_ + "/m-lost"});
  EXPECT_EQ(exported.code, 1);
  EXPECT_NE(exported.output.find("no final checkpoint to export from"), std::string::npos)
      << exported.output;
  // The running job was queued again and resumes from its newest checkpoint.
  const std::string status = ExpectResumedAfterTheRestart(
      again.address, running, 50,
      (*cluster)->Logs() + "\nthe restarted scheduler's log:\n" + again.process->LogTail(20000));
  absl::StatusOr<int> watcher_exit = (*watcher)->WaitForExit(60000);
  ASSERT_TRUE(watcher_exit.ok()) << watcher_exit.status() << (*watcher)->LogTail();
  EXPECT_EQ(*watcher_exit, 0) << (*watcher)->LogTail();
  EXPECT_NE((*watcher)->LogTail().find("watching again"), std::string::npos)
      << (*watcher)->LogTail();
  EXPECT_NE((*watcher)->LogTail().find("JOB_SUCCEEDED"), std::string::npos)
      << (*watcher)->LogTail();
  // heraldctl's status line says so, with the iterations trained again.
  testing::CommandResult line = Ctl(again.address, {"status", running});
  EXPECT_NE(line.output.find("recovered 1x ("), std::string::npos) << line.output;
  EXPECT_NE(line.output.find(" iterations trained again)"), std::string::npos) << line.output;
  // The same training resumed by another scheduler process: the planner
  // was loaded from the checkpoint's planner file, nothing replayed.
  EXPECT_EQ(status.find("\"replayed_iterations\":\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"planner_resume\":\"PLANNER_RESUME_LOADED\""), std::string::npos)
      << status;
  EXPECT_NE(status.find("\"data_resume\":\"DATA_RESUME_CURSOR\""), std::string::npos) << status;
  // One history across both schedulers: iterations 0..49 in order, those
  // before the restart from the job store, those after its checkpoint from
  // the resumed run.
  history = Ctl(again.address, {"status", running, "--history", "--csv"});
  rows = std::vector<std::string>(
      absl::StrSplit(absl::StripTrailingAsciiWhitespace(history.output), '\n'));
  ASSERT_EQ(rows.size(), 1u + 50) << history.output;
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_TRUE(absl::StartsWith(rows[i], absl::StrCat(i - 1, ","))) << rows[i];
  }
}

// A scheduler stopped with SIGTERM (systemd's restart, a rescheduled pod)
// leaves a running job as its store recorded it, as a crash would: the
// next scheduler on the same state resumes it from its checkpoint, where
// a scheduler without --state_dir cancels it.
TEST_F(SchedulerRestart, ARunningJobResumesAfterAGracefulStop) {
  const std::string state = dir_ + "/state";
  auto cluster =
      testing::LocalCluster::Start("graceful_cluster", 1, 2, nullptr, {}, StateDir(state));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string running = SubmitAndWaitForACheckpoint(**cluster, "graceful", 40);
  ASSERT_FALSE(running.empty());
  testing::ChildProcess& first = (*cluster)->scheduler();
  ASSERT_TRUE(first.Signal(SIGTERM).ok());
  absl::StatusOr<int> code = first.WaitForExit(30000);
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, 0) << first.LogTail();
  EXPECT_NE(first.LogTail().find("left running in the job store"), std::string::npos)
      << first.LogTail();

  Scheduler again = StartScheduler(dir_, state, token_file_, "again", (*cluster)->address());
  ASSERT_NE(again.process, nullptr);
  ExpectResumedAfterTheRestart(
      again.address, running, 40,
      (*cluster)->Logs() + "\nthe restarted scheduler's log:\n" + again.process->LogTail(20000));
}

}  // namespace
}  // namespace herald
