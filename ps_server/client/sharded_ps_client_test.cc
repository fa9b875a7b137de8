#include "ps_server/client/sharded_ps_client.h"

#include "common/data/test_util.h"
#include "gtest/gtest.h"
#include "ps_server/client/in_process_ps_cluster.h"
#include "ps_server/client/testing/ps_scenario.h"

namespace herald::ps {
namespace {

using testing::CheckpointScenario;
using testing::FetchAll;
using testing::RunIterations;
using testing::ScenarioOptions;
using testing::ScenarioSpec;

std::vector<TableRows> Reference(uint64_t iterations) {
  InProcessPsCluster one(1);
  ScenarioOptions o;
  EXPECT_TRUE(one.client().StartJob(o.job_id, ScenarioSpec(), o.num_workers).ok());
  absl::Status s = RunIterations(one.client(), o, 0, iterations - 1);
  EXPECT_TRUE(s.ok()) << s;
  return *FetchAll(one.client(), o, iterations);
}

void ExpectSameRows(const std::vector<TableRows>& a, const std::vector<TableRows>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t t = 0; t < a.size(); ++t) {
    EXPECT_EQ(a[t].keys, b[t].keys);
    EXPECT_EQ(a[t].row_floats, b[t].row_floats);
    EXPECT_EQ(a[t].versions, b[t].versions) << "table " << t;
    EXPECT_TRUE(a[t].rows == b[t].rows) << "table " << t << " differs";
  }
}

// Client options that split every fetch into many requests.
PsClientOptions SplittingOptions() {
  PsClientOptions small;
  small.max_request_bytes = 4096;
  return small;
}

// Starts the scenario's job on `cluster` and trains `iterations` iterations.
bool StartAndRun(InProcessPsCluster& cluster, const ScenarioOptions& o, uint64_t iterations) {
  return cluster.client().StartJob(o.job_id, ScenarioSpec(), o.num_workers).ok() &&
         RunIterations(cluster.client(), o, 0, iterations - 1).ok();
}

TEST(ShardedPsClient, AnyShardCountGivesTheSingleShardBits) {
  const std::vector<TableRows> reference = Reference(6);
  // Rows really moved: the versions count committed updates.
  EXPECT_GT(reference[0].versions[0] + reference[0].versions[1], 0u);
  for (uint32_t shards : {2u, 3u}) {
    InProcessPsCluster cluster(shards, {}, SplittingOptions());
    ScenarioOptions o;
    ASSERT_TRUE(StartAndRun(cluster, o, 6));
    auto rows = FetchAll(cluster.client(), o, 6);
    ASSERT_TRUE(rows.ok()) << rows.status();
    ExpectSameRows(*rows, reference);
    auto stats = cluster.client().Stats(o.job_id);
    ASSERT_TRUE(stats.ok());
    uint64_t pushed = 0;
    for (const auto& s : *stats) {
      EXPECT_EQ(s.iterations_committed(), 6u);
      EXPECT_EQ(s.next_iteration(), 6u);
      EXPECT_GT(s.tables(0).rows(), 0u);
      pushed += s.gradients_pushed();
    }
    EXPECT_GT(pushed, 0u);
  }
}

TEST(ShardedPsClient, RestoredCheckpointContinuesToTheSameBitsEvenResharded) {
  const std::vector<TableRows> reference = Reference(8);
  data::testing::TempDir dir;
  ScenarioOptions o;
  std::string manifest;
  {
    InProcessPsCluster cluster(2);
    ASSERT_TRUE(cluster.client().StartJob(o.job_id, ScenarioSpec(), o.num_workers).ok());
    ASSERT_TRUE(RunIterations(cluster.client(), o, 0, 3).ok());
    auto m = CheckpointScenario(cluster.client(), o, 3, dir.path());
    ASSERT_TRUE(m.ok()) << m.status();
    manifest = *m;
  }
  for (uint32_t shards : {2u, 3u}) {
    InProcessPsCluster restored(shards);
    auto next = restored.client().StartJob(o.job_id, ScenarioSpec(), o.num_workers, manifest);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(*next, 4u);
    ASSERT_TRUE(RunIterations(restored.client(), o, 4, 7).ok());
    auto rows = FetchAll(restored.client(), o, 8);
    ASSERT_TRUE(rows.ok()) << rows.status();
    ExpectSameRows(*rows, reference);
  }
}

TEST(ShardedPsClient, DuplicateKeysAreFetchedOnceAndGradientsSummed) {
  InProcessPsCluster cluster(2);
  proto::JobSpec spec = ScenarioSpec();
  ASSERT_TRUE(cluster.client().StartJob("j", spec, 1).ok());
  auto rows = cluster.client().Fetch("j", Iteration(0), {{TableId(1), {5, 9, 5}}});
  ASSERT_TRUE(rows.ok());
  const TableRows& r = (*rows)[0];
  ASSERT_EQ(r.row_floats, 4u + 4 + 4 + 1);
  EXPECT_TRUE(std::equal(r.rows.begin(), r.rows.begin() + 13, r.rows.begin() + 26));
  auto stats = cluster.client().Stats("j");
  EXPECT_EQ((*stats)[0].rows_fetched() + (*stats)[1].rows_fetched(), 2u);

  // Pushing key 5 twice equals pushing the sum once.
  ASSERT_TRUE(cluster.client()
                  .PushGradients("j", Iteration(0), WorkerRank(0),
                                 {{TableId(0), {5, 5}, 8, std::vector<float>(16, 0.25f)}})
                  .ok());
  ASSERT_TRUE(*cluster.client().IterationDone("j", Iteration(0), WorkerRank(0), 1));
  InProcessPsCluster other(1);
  ASSERT_TRUE(other.client().StartJob("j", spec, 1).ok());
  ASSERT_TRUE(other.client()
                  .PushGradients("j", Iteration(0), WorkerRank(0),
                                 {{TableId(0), {5}, 8, std::vector<float>(8, 0.5f)}})
                  .ok());
  ASSERT_TRUE(*other.client().IterationDone("j", Iteration(0), WorkerRank(0), 1));
  EXPECT_EQ((*cluster.client().Fetch("j", Iteration(1), {{TableId(0), {5}}}))[0].rows,
            (*other.client().Fetch("j", Iteration(1), {{TableId(0), {5}}}))[0].rows);
}

// A fetch into the caller's memory writes exactly what Fetch returns, over
// any shard count and split requests, started now or on Wait; the sink's
// shape and the rows' width are checked.
TEST(ShardedPsClient, FetchIntoASinkWritesWhatFetchReturns) {
  for (uint32_t shards : {1u, 3u}) {
    InProcessPsCluster cluster(shards, {}, SplittingOptions());
    ScenarioOptions o;
    ASSERT_TRUE(StartAndRun(cluster, o, 3));
    auto expected = FetchAll(cluster.client(), o, 3);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::vector<TableKeys> keys;
    for (const TableRows& t : *expected) keys.push_back({t.table, t.keys});
    for (Launch launch : {Launch::kOnWait, Launch::kBackground}) {
      std::vector<std::vector<float>> rows(keys.size());
      std::vector<std::vector<uint64_t>> versions(keys.size());
      RowSink sink;
      for (size_t t = 0; t < keys.size(); ++t) {
        rows[t].assign(keys[t].keys.size() * (*expected)[t].row_floats, -1.0f);
        versions[t].assign(keys[t].keys.size(), 999);
        sink.rows.push_back(rows[t].data());
        sink.versions.push_back(versions[t].data());
        sink.row_floats.push_back((*expected)[t].row_floats);
      }
      const absl::Status s =
          cluster.client()
              .StartFetchInto(o.job_id, Iteration(3), keys, FetchMode::kCommitted, launch, sink)
              .Wait();
      ASSERT_TRUE(s.ok()) << s;
      for (size_t t = 0; t < keys.size(); ++t) {
        EXPECT_TRUE(rows[t] == (*expected)[t].rows) << shards << " shards, table " << t;
        EXPECT_EQ(versions[t], (*expected)[t].versions) << shards << " shards, table " << t;
      }
    }
    // Shape and width errors.
    std::vector<float> row(64);
    std::vector<uint64_t> version(4);
    const std::vector<TableKeys> two = {{TableId(0), {1, 2}}};
    const absl::Status no_widths =
        cluster.client()
            .StartFetchInto(o.job_id, Iteration(3), two, FetchMode::kCommitted, Launch::kOnWait,
                            RowSink{{row.data()}, {version.data()}, {}})
            .Wait();
    EXPECT_EQ(no_widths.code(), absl::StatusCode::kInvalidArgument) << no_widths;
    EXPECT_NE(no_widths.message().find("0 widths for 1 tables"), std::string::npos) << no_widths;
    const absl::Status narrow =
        cluster.client()
            .StartFetchInto(o.job_id, Iteration(3), two, FetchMode::kCommitted, Launch::kOnWait,
                            RowSink{{row.data()}, {version.data()}, {3}})
            .Wait();
    EXPECT_EQ(narrow.code(), absl::StatusCode::kDataLoss) << narrow;
    EXPECT_NE(narrow.message().find("malformed rows of table 0"), std::string::npos) << narrow;
    EXPECT_NE(narrow.message().find("of 3 floats"), std::string::npos) << narrow;
  }
}

TEST(ShardedPsClient, ErrorsNameTheShardAndTheProblem) {
  InProcessPsCluster cluster(2);
  auto missing = cluster.client().Fetch("nope", Iteration(0), {{TableId(0), {1, 2, 3}}});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("ps shard"), std::string::npos) << missing.status();
  EXPECT_NE(missing.status().message().find("job 'nope' is not running"), std::string::npos);
  ASSERT_TRUE(cluster.client().StartJob("j", ScenarioSpec(), 1).ok());
  EXPECT_EQ(cluster.client().StartJob("j", ScenarioSpec(), 3).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(cluster.client().StartJob("j", ScenarioSpec(), 1).ok());  // retry: no-op
  EXPECT_EQ(cluster.client()
                .WriteBack("j", Iteration(0), WorkerRank(0),
                           {{TableId(0), {1, 1}, 16, std::vector<float>(32), {0, 0}}})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster.client().CheckpointShards("other", 0, "/tmp").status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(cluster.client().EndJob("j").ok());
  EXPECT_EQ(cluster.client().Stats("j").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace herald::ps
