// A full disk under a shard's disk tier: the shard keeps the rows it could
// not write in memory and ends the job with the store's path and the
// error, so every later request of the job fails naming them (and the job
// with them). Its own binary: mounting the small file system needs a
// process without threads yet.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/data/test_util.h"
#include "common/testing/small_tmpfs.h"
#include "gtest/gtest.h"
#include "ps_server/shard/job_shard.h"

namespace herald::ps {
namespace {

TEST(DiskTierFullDisk, AFullDiskEndsTheJobNamingTheStore) {
  data::testing::TempDir dir;
  const std::string disk = dir.File("small-disk");
  const std::string why = testing::MountSmallTmpfs(disk, "size=256k");
  if (!why.empty()) {
    std::printf("SKIPPED (no mount namespaces): %s\n", why.c_str());
    GTEST_SKIP() << why;
  }
  ThreadPool pool(2);
  JobShardOptions o;
  o.job_id = "full";
  o.stripes_per_table = 2;
  TableOptions table;
  table.dim = 16;
  table.seed = 3;
  o.tables.push_back(table);
  const std::string store = disk + "/full/shard-0-of-1";
  o.disk.memory_budget = 16 << 10;
  o.disk.path = store;
  o.disk.owner = {"full", 0, 1};
  o.disk.memtable_bytes = 64 << 10;  // flushed to the small disk early
  auto shard = JobShard::Create(o, &pool);
  ASSERT_TRUE(shard.ok()) << shard.status();
  // Every iteration creates and trains 256 new rows: the evicted ones fill
  // the disk within a few dozen iterations (bounded at 400).
  absl::Status failed;
  uint64_t t = 0;
  for (; t < 400 && failed.ok(); ++t) {
    std::vector<Key> keys(256);
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = t * keys.size() + i;
    std::vector<char> rows(keys.size() * 16 * 4), versions(keys.size() * 8);
    FetchIn fetch{t, false, false, {{0, keys}}};
    failed = (*shard)->Fetch(fetch, absl::Now() + absl::Seconds(30), [&](size_t, uint32_t) {
      return RowsOut{rows.data(), versions.data()};
    });
    if (!failed.ok()) break;
    std::vector<float> grads(keys.size() * 16, 0.5f);
    failed = (*shard)->PushGradients({t, 0, {{0, 16, keys, grads}}});
    if (!failed.ok()) break;
    failed = (*shard)->IterationDone(Iteration(t), WorkerRank(0), 1).status();
  }
  ASSERT_FALSE(failed.ok()) << "the disk never filled in " << t << " iterations";
  EXPECT_EQ(failed.code(), absl::StatusCode::kAborted) << failed;
  EXPECT_TRUE(absl::StrContains(failed.message(), "disk tier failed")) << failed;
  EXPECT_TRUE(absl::StrContains(failed.message(), store)) << failed;
  std::printf("iteration %llu: %s\n", static_cast<unsigned long long>(t),
              std::string(failed.message()).c_str());
  // Still answers: its statistics, and the same error for the next request.
  proto::PsStatsResponse stats;
  (*shard)->Stats(&stats);
  EXPECT_GT(stats.disk_tier().rows_written(), 0u);
  EXPECT_EQ((*shard)->IterationDone(Iteration(t + 1), WorkerRank(0), 1).status().code(),
            absl::StatusCode::kAborted);
}

}  // namespace
}  // namespace herald::ps
