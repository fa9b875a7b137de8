// Two real herald_ps processes on 127.0.0.1, driven through the router by the
// gRPC PsClient: fetch / push / write-back / commit / checkpoint / restore,
// checked bit for bit against one in-process shard running the same
// workload. Also: a checkpoint writer killed halfway leaves the previous
// checkpoint usable.

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <future>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checkpoint/manifest.h"
#include "gtest/gtest.h"
#include "ps_server/client/in_process_ps_cluster.h"
#include "ps_server/client/sharded_ps_client.h"
#include "ps_server/client/testing/ps_scenario.h"
#include "tests/harness/process.h"

namespace herald {
namespace {

using ps::testing::CheckpointScenario;
using ps::testing::FetchAll;
using ps::testing::RunIterations;
using ps::testing::ScenarioOptions;
using ps::testing::ScenarioSpec;
using testing::ChildProcess;
using testing::MakeTestDir;
using testing::RunfilePath;

constexpr int64_t kStartMs = 30000;

struct Shards {
  std::vector<std::unique_ptr<ChildProcess>> processes;
  std::vector<std::string> addresses;
};

// Starts `n` herald_ps; extra_args[i] are added to shard i's command line.
Shards StartShards(const std::string& dir, const std::string& tag, uint32_t n,
                   const std::vector<std::vector<std::string>>& extra_args = {}) {
  Shards shards;
  for (uint32_t i = 0; i < n; ++i) {
    const std::string port_file = absl::StrCat(dir, "/", tag, "-", i, ".port");
    std::vector<std::string> args = {"--listen=127.0.0.1:0", "--port_file=" + port_file,
                                     "--threads=2", absl::StrCat("--shard=", i)};
    if (i < extra_args.size()) args.insert(args.end(), extra_args[i].begin(), extra_args[i].end());
    // herald_ps with its test hooks: some shards stall a checkpoint.
    auto child = ChildProcess::Start(RunfilePath("ps_server/herald_ps_with_test_hooks"), args,
                                     absl::StrCat(dir, "/", tag, "-", i, ".log"));
    EXPECT_TRUE(child.ok()) << child.status();
    auto port = (*child)->WaitForPortFile(port_file, kStartMs);
    EXPECT_TRUE(port.ok()) << port.status();
    shards.addresses.push_back(absl::StrCat("127.0.0.1:", *port));
    shards.processes.push_back(*std::move(child));
  }
  return shards;
}

std::unique_ptr<ps::PsClient> Connect(const Shards& shards) {
  auto client = ps::MakeGrpcPsClient(shards.addresses);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

std::vector<ps::TableRows> Reference(uint64_t iterations) {
  ps::InProcessPsCluster one(1);
  ScenarioOptions o;
  EXPECT_TRUE(one.client().StartJob(o.job_id, ScenarioSpec(), o.num_workers).ok());
  EXPECT_TRUE(RunIterations(one.client(), o, 0, iterations - 1).ok());
  return *FetchAll(one.client(), o, iterations);
}

void ExpectSameRows(const std::vector<ps::TableRows>& got, const std::vector<ps::TableRows>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t t = 0; t < got.size(); ++t) {
    EXPECT_EQ(got[t].versions, want[t].versions) << "table " << t;
    EXPECT_TRUE(got[t].rows == want[t].rows) << "table " << t << " differs from the reference";
  }
}

void StopAll(Shards& shards) {
  for (auto& p : shards.processes) {
    ASSERT_TRUE(p->Signal(SIGTERM).ok());
    auto code = p->WaitForExit(kStartMs);
    ASSERT_TRUE(code.ok()) << code.status();
    EXPECT_EQ(*code, 0) << p->LogTail();
  }
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    ::closedir(d);
  }
  return names;
}

TEST(PsCluster, TwoShardsMatchTheSingleShardReferenceAndRestoreFromCheckpoint) {
  const std::string dir = MakeTestDir("ps_cluster");
  const std::string ckpt = dir + "/ckpt";
  ScenarioOptions o;
  const std::vector<ps::TableRows> reference = Reference(8);
  std::string manifest;
  {
    Shards shards = StartShards(dir, "a", 2);
    auto client = Connect(shards);
    ASSERT_TRUE(client->StartJob(o.job_id, ScenarioSpec(), o.num_workers).ok());
    ASSERT_TRUE(RunIterations(*client, o, 0, 3).ok());

    // A request that does not fit is refused precisely; the shards keep serving.
    auto bad = client->Fetch(o.job_id, Iteration(4), {{TableId(7), {1, 2}}});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find("table 7 does not exist"), std::string::npos)
        << bad.status();
    auto stale = client->PushGradients(o.job_id, Iteration(2), WorkerRank(0),
                                       {{TableId(1), {3}, 4, {1, 1, 1, 1}}});
    EXPECT_EQ(stale.code(), absl::StatusCode::kFailedPrecondition) << stale;

    auto m = CheckpointScenario(*client, o, 3, ckpt);
    ASSERT_TRUE(m.ok()) << m.status();
    manifest = *m;
    ASSERT_TRUE(RunIterations(*client, o, 4, 7).ok());
    auto rows = FetchAll(*client, o, 8);
    ASSERT_TRUE(rows.ok()) << rows.status();
    ExpectSameRows(*rows, reference);

    auto stats = client->Stats(o.job_id);
    ASSERT_TRUE(stats.ok());
    for (const auto& s : *stats) {
      EXPECT_EQ(s.iterations_committed(), 8u);
      EXPECT_EQ(s.rejected_requests(), 1u);  // each shard saw one bad request
      EXPECT_GT(s.memory_bytes(), 0u);
    }
    StopAll(shards);
  }
  // Fresh processes restore the iteration-3 checkpoint at start and continue.
  Shards shards = StartShards(dir, "b", 2, {{"--restore=" + manifest}, {"--restore=" + manifest}});
  auto client = Connect(shards);
  auto next = client->StartJob(o.job_id, ScenarioSpec(), o.num_workers, manifest);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, 4u);
  ASSERT_TRUE(RunIterations(*client, o, 4, 7).ok());
  auto rows = FetchAll(*client, o, 8);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ExpectSameRows(*rows, reference);
  StopAll(shards);
}

TEST(PsCluster, KillingACheckpointWriterLeavesThePreviousCheckpointUsable) {
  const std::string dir = MakeTestDir("ps_kill");
  const std::string ckpt = dir + "/ckpt";
  const std::string marker = dir + "/stalled";
  ScenarioOptions o;
  std::string good;
  {
    // Shard 1 stalls halfway through every checkpoint it writes.
    Shards shards = StartShards(dir, "a", 2, {{}, {"--testing_checkpoint_stall_file=" + marker}});
    auto client = Connect(shards);
    ASSERT_TRUE(client->StartJob(o.job_id, ScenarioSpec(), o.num_workers).ok());
    ASSERT_TRUE(RunIterations(*client, o, 0, 2).ok());
    // No checkpoint exists yet; the first one dies with shard 1 halfway.
    auto first =
        std::async(std::launch::async, [&] { return CheckpointScenario(*client, o, 2, ckpt); });
    ASSERT_TRUE(shards.processes[1]->WaitForFile(marker, kStartMs).ok());
    // Shard 1 is stalled halfway through iteration 2's file: kill it.
    ASSERT_TRUE(shards.processes[1]->Signal(SIGKILL).ok());
    auto code = shards.processes[1]->WaitForExit(kStartMs);
    ASSERT_TRUE(code.ok());
    EXPECT_EQ(*code, 128 + SIGKILL);
    auto result = first.get();
    EXPECT_FALSE(result.ok());
    // No manifest for iteration 2; shard 1's file never got its final name.
    const std::string iter2 = checkpoint::CheckpointIterationDir(ckpt, o.job_id, 2);
    EXPECT_FALSE(Exists(iter2 + "/MANIFEST"));
    EXPECT_FALSE(Exists(iter2 + "/" + checkpoint::ShardFileName(1, 2)));
    bool partial = false;
    for (const std::string& name : List(iter2)) partial |= name.find(".tmp-") != std::string::npos;
    EXPECT_TRUE(partial) << "the killed writer's temporary file should be there";
    EXPECT_EQ(checkpoint::FindLatestManifest(ckpt, o.job_id).status().code(),
              absl::StatusCode::kNotFound);
    shards.processes[0]->Signal(SIGTERM).IgnoreError();
    shards.processes[0]->WaitForExit(kStartMs).IgnoreError();
  }
  {
    // A clean cluster takes checkpoint 1; a stalling one then dies on 3.
    Shards shards = StartShards(dir, "c", 2);
    auto client = Connect(shards);
    ASSERT_TRUE(client->StartJob(o.job_id, ScenarioSpec(), o.num_workers).ok());
    ASSERT_TRUE(RunIterations(*client, o, 0, 1).ok());
    auto m = CheckpointScenario(*client, o, 1, ckpt);
    ASSERT_TRUE(m.ok()) << m.status();
    good = *m;
    StopAll(shards);
  }
  {
    std::remove(marker.c_str());
    Shards shards =
        StartShards(dir, "d", 2,
                    {{"--restore=" + good},
                     {"--restore=" + good, "--testing_checkpoint_stall_file=" + marker}});
    auto client = Connect(shards);
    ASSERT_TRUE(client->StartJob(o.job_id, ScenarioSpec(), o.num_workers, good).ok());
    ASSERT_TRUE(RunIterations(*client, o, 2, 3).ok());
    auto broken =
        std::async(std::launch::async, [&] { return CheckpointScenario(*client, o, 3, ckpt); });
    ASSERT_TRUE(shards.processes[1]->WaitForFile(marker, kStartMs).ok());
    ASSERT_TRUE(shards.processes[1]->Signal(SIGKILL).ok());
    ASSERT_TRUE(shards.processes[1]->WaitForExit(kStartMs).ok());
    EXPECT_FALSE(broken.get().ok());
    shards.processes[0]->Signal(SIGTERM).IgnoreError();
    shards.processes[0]->WaitForExit(kStartMs).IgnoreError();
  }
  // The newest complete checkpoint is still iteration 1, and it restores to
  // exactly the reference.
  auto latest = checkpoint::FindLatestManifest(ckpt, o.job_id);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, good);
  Shards shards = StartShards(dir, "e", 2, {{"--restore=" + good}, {"--restore=" + good}});
  auto client = Connect(shards);
  ASSERT_TRUE(client->StartJob(o.job_id, ScenarioSpec(), o.num_workers, good).ok());
  ASSERT_TRUE(RunIterations(*client, o, 2, 4).ok());
  auto rows = FetchAll(*client, o, 5);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ExpectSameRows(*rows, Reference(5));
  StopAll(shards);
}

}  // namespace
}  // namespace herald
