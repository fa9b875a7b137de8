// Incremental exports on a real cluster (docs/export.md, "Incremental
// exports"): a job that exports every 2 iterations during training writes a
// whole export, then increments of the rows changed since the one before,
// and one from its final checkpoint; that chain, read by model_reader, is
// the model the job's whole export at the end holds, every float. An export
// made afterwards --since the first one is too.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checkpoint/manifest.h"
#include "gtest/gtest.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/small_job.h"
#include "tools/model_reader.h"

namespace herald {
namespace {

constexpr uint64_t kIterations = 12;

// Every table's rows by key: the model a serving system loads.
std::vector<std::map<Key, std::vector<float>>> RowsByKey(const tools::ExportedModel& m) {
  std::vector<std::map<Key, std::vector<float>>> tables(m.tables.size());
  for (size_t t = 0; t < m.tables.size(); ++t) {
    const tools::ExportedTable& table = m.tables[t];
    for (size_t i = 0; i < table.keys.size(); ++i) {
      tables[t][table.keys[i]].assign(table.rows.begin() + i * table.row_floats,
                                      table.rows.begin() + (i + 1) * table.row_floats);
    }
  }
  return tables;
}

void ExpectSameModel(const tools::ExportedModel& a, const tools::ExportedModel& b) {
  EXPECT_EQ(a.dense, b.dense);
  ASSERT_EQ(a.tables.size(), b.tables.size());
  const auto ra = RowsByKey(a), rb = RowsByKey(b);
  for (size_t t = 0; t < ra.size(); ++t) EXPECT_EQ(ra[t], rb[t]) << "table " << t;
}

// A small job that checkpoints and exports every 2 iterations under `c`.
proto::JobSpec ExportingJob(const testing::LocalCluster& c, const std::string& name) {
  proto::JobSpec spec = testing::SmallWideAndDeepJob(name, proto::POLICY_HERALD, kIterations);
  spec.mutable_checkpoint()->set_dir(c.dir() + "/ckpt");
  spec.mutable_checkpoint()->set_every_iterations(2);
  spec.mutable_exports()->set_dir(c.dir() + "/exports");
  spec.mutable_exports()->set_every_iterations(2);
  return spec;
}

// The job's exports, oldest first: after iterations 1, 3, 5, 7, 9
// (periodic) and 11 (final).
std::vector<std::string> ExportsOf(const testing::LocalCluster& c, const std::string& job) {
  std::vector<std::string> exports;
  for (uint64_t it = 1; it < kIterations; it += 2) {
    exports.push_back(checkpoint::CheckpointIterationDir(c.dir() + "/exports", job, it));
  }
  return exports;
}

// The responses of the two exports ExpectChainsAreTheWholeModel makes.
struct LaterExports {
  proto::ExportJobResponse whole;  // of the model at the end, from the PS shards
  proto::ExportJobResponse since;  // --since the first periodic export
  uint64_t since_deleted = 0;      // rows the latter deletes from its chain
};

// The chain read from the newest of `exports` (the job's periodic ones,
// oldest first) is the job's whole export at the end, every float; so is
// the chain of an export made afterwards --since the first of them.
LaterExports ExpectChainsAreTheWholeModel(testing::LocalCluster& c, const std::string& job,
                                          const std::vector<std::string>& exports) {
  LaterExports out;
  const std::string whole = c.dir() + "/whole";
  auto exported = c.Export(job, whole);
  EXPECT_TRUE(exported.ok()) << exported.status();
  auto full = tools::ReadModelExport(whole);
  EXPECT_TRUE(full.ok()) << full.status();
  auto chain = tools::ReadModelExport(exports.back());
  EXPECT_TRUE(chain.ok()) << chain.status();
  if (!exported.ok() || !full.ok() || !chain.ok()) return out;
  out.whole = *exported;
  EXPECT_EQ(chain->manifest.full_rows(), exported->rows());
  ExpectSameModel(*chain, *full);

  const std::string since = c.dir() + "/since-first";
  auto increment = c.Export(job, since, exports.front());
  EXPECT_TRUE(increment.ok()) << increment.status();
  auto since_chain = tools::ReadModelExport(since);
  EXPECT_TRUE(since_chain.ok()) << since_chain.status();
  if (!increment.ok() || !since_chain.ok()) return out;
  out.since = *increment;
  out.since_deleted = since_chain->manifest.deleted_rows();
  ExpectSameModel(*since_chain, *full);
  return out;
}

TEST(IncrementalExports, AChainOfIncrementsIsTheWholeModel) {
  auto cluster = testing::LocalCluster::Start("incremental_export", 2, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  testing::LocalCluster& c = **cluster;
  auto job = c.Submit(ExportingJob(c, "increments"));
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus done = c.Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << c.Logs();

  const std::vector<std::string> exports = ExportsOf(c, *job);
  uint64_t whole_bytes = 0;
  for (size_t i = 0; i < exports.size(); ++i) {
    auto one = tools::ReadModelExport(exports[i]);
    ASSERT_TRUE(one.ok()) << exports[i] << ": " << one.status() << c.Logs();
    EXPECT_EQ(one->manifest.base(), i == 0 ? "" : exports[i - 1]);
    EXPECT_EQ(one->manifest.iterations(), 2 * i + 2);
    uint64_t bytes = 0;
    for (const auto& f : std::filesystem::recursive_directory_iterator(exports[i])) {
      if (f.is_regular_file()) bytes += f.file_size();
    }
    if (i == 0) whole_bytes = bytes;
    EXPECT_LE(one->manifest.rows(), one->manifest.full_rows());
    if (i > 0) {
      EXPECT_LT(one->manifest.rows(), one->manifest.full_rows()) << exports[i];
    }
    std::printf(
        "export after iteration %llu: %llu of %llu rows, %llu bytes (the first, whole: %llu)\n",
        static_cast<unsigned long long>(2 * i + 1),
        static_cast<unsigned long long>(one->manifest.rows()),
        static_cast<unsigned long long>(one->manifest.full_rows()),
        static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(whole_bytes));
  }

  // LATEST beside them names the newest: the final one.
  std::ifstream latest(c.dir() + "/exports/" + *job + "/LATEST");
  std::stringstream latest_text;
  latest_text << latest.rdbuf();
  EXPECT_EQ(latest_text.str(), std::filesystem::path(exports.back()).filename().string() + "\n");

  const LaterExports later = ExpectChainsAreTheWholeModel(c, *job, exports);
  const proto::ExportJobResponse& increment = later.since;
  EXPECT_LT(increment.rows(), increment.full_rows());
  EXPECT_EQ(increment.full_rows(), later.whole.rows());
  EXPECT_LT(increment.bytes(), increment.full_bytes());
  EXPECT_EQ(later.since_deleted, 0u);
  std::printf("export since the first: %llu of %llu rows, %llu of %llu bytes\n",
              static_cast<unsigned long long>(increment.rows()),
              static_cast<unsigned long long>(increment.full_rows()),
              static_cast<unsigned long long>(increment.bytes()),
              static_cast<unsigned long long>(increment.full_bytes()));

  // A base that is not an export, and a relative one, are refused.
  auto missing = c.Export(*job, c.dir() + "/bad", c.dir() + "/nowhere");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  EXPECT_NE(missing.status().message().find("nowhere"), std::string::npos);
  auto relative = c.Export(*job, c.dir() + "/bad2", "exports");
  EXPECT_EQ(relative.status().code(), absl::StatusCode::kInvalidArgument) << relative.status();
}

// With row expiry (tables[].expiry) the PS deletes rows during training:
// each increment lists the rows of the chain the model no longer has, and
// the chain read with them is still exactly the whole model at the end;
// an export made afterwards --since the first one deletes what expired
// since, too.
TEST(IncrementalExports, IncrementsCarryTheRowsExpiryDeleted) {
  auto cluster = testing::LocalCluster::Start("incremental_expiry", 2, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  testing::LocalCluster& c = **cluster;
  proto::JobSpec spec = ExportingJob(c, "expiring");
  for (proto::TableSpec& t : *spec.mutable_tables()) t.mutable_expiry()->set_after_iterations(2);
  // By the clock instead (exports.every_minutes): a period this short has
  // always passed, so every checkpoint (every 2 iterations) is exported.
  spec.mutable_exports()->set_every_iterations(0);
  spec.mutable_exports()->set_every_minutes(1e-9);
  auto job = c.Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus done = c.Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << c.Logs();
  EXPECT_GT(done.progress().rows_expired(), 0u);

  const std::vector<std::string> exports = ExportsOf(c, *job);
  uint64_t deleted = 0;
  for (const std::string& dir : exports) {
    auto one = tools::ReadModelExport(dir);
    ASSERT_TRUE(one.ok()) << dir << ": " << one.status() << c.Logs();
    deleted += one->manifest.deleted_rows();
    EXPECT_EQ(one->manifest.deleted_file().empty(), one->manifest.deleted_rows() == 0);
  }
  EXPECT_GT(deleted, 0u) << "the increments delete the expired rows";
  EXPECT_GT(ExpectChainsAreTheWholeModel(c, *job, exports).since_deleted, 0u);
}

TEST(IncrementalExports, ExportsMustFollowTheCheckpoints) {
  auto cluster = testing::LocalCluster::Start("incremental_export_spec", 1, 1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  proto::JobSpec spec = testing::SmallWideAndDeepJob("bad-exports", proto::POLICY_HERALD, 4);
  spec.mutable_checkpoint()->set_dir((*cluster)->dir() + "/ckpt");
  spec.mutable_checkpoint()->set_every_iterations(2);
  spec.mutable_exports()->set_dir((*cluster)->dir() + "/exports");
  spec.mutable_exports()->set_every_iterations(3);
  auto refused = (*cluster)->Submit(spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("multiple of checkpoint.every_iterations"),
            std::string::npos)
      << refused.status();
  spec.mutable_exports()->set_every_iterations(0);
  spec.mutable_exports()->set_every_minutes(-1);
  refused = (*cluster)->Submit(spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("exports.every_minutes: -1, want > 0"),
            std::string::npos)
      << refused.status();

  // Exports by the clock with a period that does not pass during the job:
  // only the final export is made, and LATEST names it.
  spec.mutable_exports()->set_every_minutes(60);
  spec.set_num_workers(1);  // this cluster's one worker
  auto job = (*cluster)->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ((*cluster)->Watch(*job).state(), proto::JOB_SUCCEEDED) << (*cluster)->Logs();
  const std::string exports = (*cluster)->dir() + "/exports/" + *job;
  std::vector<std::string> made;
  for (const auto& e : std::filesystem::directory_iterator(exports)) {
    made.push_back(e.path().filename().string());
  }
  std::sort(made.begin(), made.end());
  const std::string final_export =
      std::filesystem::path(
          checkpoint::CheckpointIterationDir((*cluster)->dir() + "/exports", *job, 3))
          .filename()
          .string();
  EXPECT_EQ(made, (std::vector<std::string>{"LATEST", final_export}));
}

}  // namespace
}  // namespace herald
