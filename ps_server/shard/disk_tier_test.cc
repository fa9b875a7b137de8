// A job shard with a disk tier against the same job all in memory: every
// fetch, the checkpoint and a restore are bit for bit the same, while the
// tier keeps its rows within the budget and moves rows through the disk.

#include "ps_server/shard/disk_tier.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "common/data/test_util.h"
#include "common/rng.h"
#include "gtest/gtest.h"
#include "ps_server/shard/job_shard.h"
#include "ps_server/shard/restore.h"

namespace herald::ps {
namespace {

using data::testing::TempDir;

constexpr uint32_t kWorkers = 3;
constexpr uint32_t kKeysPerTable = 3000;
const uint32_t kDims[] = {4, 8};

JobShardOptions Options() {
  JobShardOptions o;
  o.job_id = "tiered";
  o.num_workers = kWorkers;
  o.stripes_per_table = 4;
  for (uint32_t t = 0; t < 2; ++t) {
    TableOptions table;
    table.id = TableId(t);
    table.dim = kDims[t];
    table.seed = 11;
    table.optimizer.kind = math::SparseOptimizerKind::kAdagrad;
    table.optimizer.learning_rate = 0.05f;
    o.tables.push_back(table);
  }
  return o;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One shard driven through a job: the keys each worker touches per
// iteration are a skewed draw, so some rows stay hot and most go cold.
class Driver {
 public:
  explicit Driver(JobShard* shard) : shard_(shard) {}

  static std::vector<Key> KeysOf(uint64_t t, uint32_t worker, uint32_t table) {
    CounterRng rng(5, t, worker * 10 + table);
    std::vector<Key> keys;
    for (int i = 0; i < 40; ++i) {
      // Half from a hot set of 50 keys, half from the whole range.
      const Key k = rng.NextBelow(2) == 0 ? rng.NextBelow(50) : rng.NextBelow(kKeysPerTable);
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    return keys;
  }

  // Runs iteration t: every worker fetches, writes back a few rows it
  // fetched, and pushes gradients; returns every fetched byte. Worker 0's
  // report carries `expire` (row expiry).
  std::string Iterate(uint64_t t, const std::vector<KeysIn>& expire = {}) {
    std::string fetched;
    for (uint32_t w = 0; w < kWorkers; ++w) {
      std::vector<std::vector<Key>> keys(2);
      for (uint32_t table = 0; table < 2; ++table) keys[table] = KeysOf(t, w, table);
      FetchIn in;
      in.iteration = t;
      for (uint32_t table = 0; table < 2; ++table) in.blocks.push_back({table, keys[table]});
      std::vector<std::vector<char>> rows(2), versions(2);
      absl::Status s =
          shard_->Fetch(in, absl::Now() + absl::Seconds(30), [&](size_t b, uint32_t rf) {
            rows[b].resize(keys[b].size() * rf * 4);
            versions[b].resize(keys[b].size() * 8);
            return RowsOut{rows[b].data(), versions[b].data()};
          });
      EXPECT_TRUE(s.ok()) << s;
      for (uint32_t table = 0; table < 2; ++table) {
        fetched.append(rows[table].begin(), rows[table].end());
        fetched.append(versions[table].begin(), versions[table].end());
      }
      // Worker w writes back its first key of table 1 (if no other worker
      // does this iteration), changed; pushes gradients for the rest.
      PushIn push{t, w, {}};
      WriteBackIn wb{t, w, {}};
      std::vector<std::vector<float>> grads(2);
      std::vector<std::vector<Key>> push_keys(2), wb_keys(2);
      std::vector<float> wb_row;
      std::vector<uint64_t> wb_version;
      for (uint32_t table = 0; table < 2; ++table) {
        const uint32_t rf = static_cast<uint32_t>(rows[table].size() / 4 / keys[table].size());
        for (size_t i = 0; i < keys[table].size(); ++i) {
          const Key k = keys[table][i];
          if (table == 1 && i == 0 && k % kWorkers == w) {
            wb_keys[1].push_back(k);
            std::vector<float> row(rf);
            std::memcpy(row.data(), rows[1].data() + i * rf * 4, rf * 4);
            for (float& f : row) f = f * 0.5f + 0.25f;
            wb_row.insert(wb_row.end(), row.begin(), row.end());
            uint64_t v;
            std::memcpy(&v, versions[1].data() + i * 8, 8);
            wb_version.push_back(v + 3);
            continue;
          }
          push_keys[table].push_back(k);
          for (uint32_t d = 0; d < kDims[table]; ++d) {
            grads[table].push_back(static_cast<float>((k * 7 + d + t + w) % 13) * 0.01f - 0.06f);
          }
        }
        push.blocks.push_back({table, kDims[table], push_keys[table], grads[table]});
      }
      EXPECT_TRUE(shard_->PushGradients(push).ok());
      if (!wb_keys[1].empty()) {
        const uint32_t rf = static_cast<uint32_t>(wb_row.size() / wb_keys[1].size());
        wb.blocks.push_back({1, rf, wb_keys[1], wb_row, wb_version});
        absl::Status s = shard_->WriteBack(wb);
        EXPECT_TRUE(s.ok()) << s;
      }
    }
    for (uint32_t w = 0; w < kWorkers; ++w) {
      absl::StatusOr<bool> done = shard_->IterationDone(
          Iteration(t), WorkerRank(w), kWorkers, nullptr,
          w == 0 ? absl::Span<const KeysIn>(expire) : absl::Span<const KeysIn>());
      EXPECT_TRUE(done.ok()) << done.status();
    }
    return fetched;
  }

  // Every key of both tables, read only.
  std::string ReadEverything(uint64_t t) {
    std::vector<Key> all(kKeysPerTable);
    for (Key k = 0; k < kKeysPerTable; ++k) all[k] = k;
    FetchIn in;
    in.iteration = t;
    in.read_only = true;
    in.blocks = {{0, all}, {1, all}};
    std::vector<std::string> out(4);
    absl::Status s = shard_->Fetch(in, absl::Now() + absl::Seconds(30), [&](size_t b, uint32_t rf) {
      out[2 * b].resize(all.size() * rf * 4);
      out[2 * b + 1].resize(all.size() * 8);
      return RowsOut{out[2 * b].data(), out[2 * b + 1].data()};
    });
    EXPECT_TRUE(s.ok()) << s;
    return out[0] + out[1] + out[2] + out[3];
  }

  void LookAhead(uint64_t t) {
    std::vector<LookAheadKeys> keys(2);
    for (uint32_t table = 0; table < 2; ++table) {
      keys[table].table = table;
      for (uint32_t w = 0; w < kWorkers; ++w) {
        for (Key k : KeysOf(t, w, table)) keys[table].keys.push_back(k);
      }
      std::sort(keys[table].keys.begin(), keys[table].keys.end());
      keys[table].keys.erase(std::unique(keys[table].keys.begin(), keys[table].keys.end()),
                             keys[table].keys.end());
    }
    EXPECT_TRUE(shard_->LookAhead(Iteration(t), keys).ok());
  }

 private:
  JobShard* shard_;
};

class DiskTierTest : public ::testing::Test {
 protected:
  std::unique_ptr<JobShard> Make(uint64_t budget, const std::string& path) {
    JobShardOptions o = Options();
    o.disk.memory_budget = budget;
    o.disk.path = path;
    o.disk.owner = {o.job_id, 0, 1};
    auto shard = JobShard::Create(std::move(o), &pool_);
    EXPECT_TRUE(shard.ok()) << shard.status();
    return shard.ok() ? *std::move(shard) : nullptr;
  }
  static proto::DiskTierStats TierStats(JobShard& s) {
    proto::PsStatsResponse r;
    s.Stats(&r);
    return r.disk_tier();
  }
  static std::string Checkpoint(JobShard& s, const std::string& dir, uint64_t t) {
    auto info = s.Checkpoint(dir, t, absl::Now() + absl::Seconds(30));
    EXPECT_TRUE(info.ok()) << info.status();
    return info.ok() ? ReadAll(info->path) : "";
  }

  ThreadPool pool_{2};
  TempDir dir_;
};

// About 90 rows' worth: a small share of the ~3000 rows each table grows to.
constexpr uint64_t kSmallBudget = 90 * 100;
constexpr uint64_t kIterations = 40;

TEST_F(DiskTierTest, AJobWithRowsOnDiskFetchesAndCheckpointsWhatTheJobInMemoryDoes) {
  auto memory = Make(0, "");
  auto tiered = Make(kSmallBudget, dir_.File("store"));
  ASSERT_TRUE(memory && tiered);
  EXPECT_FALSE(memory->has_disk_tier());
  EXPECT_TRUE(tiered->has_disk_tier());
  Driver a(memory.get()), b(tiered.get());
  for (uint64_t t = 0; t < kIterations; ++t) {
    ASSERT_EQ(a.Iterate(t), b.Iterate(t)) << "iteration " << t;
  }
  EXPECT_EQ(a.ReadEverything(kIterations), b.ReadEverything(kIterations));
  const proto::DiskTierStats stats = TierStats(*tiered);
  EXPECT_GT(stats.rows_evicted(), 1000u);
  EXPECT_GT(stats.rows_written(), 500u);
  EXPECT_GT(stats.rows_read_on_critical_path(), 100u);  // no look-ahead here
  EXPECT_EQ(stats.rows_loaded_ahead(), 0u);
  // After the last commit the rows in memory fit the budget, but the last
  // iteration's rows (still "in use" until it is checkpointed) may stay.
  EXPECT_LE(stats.resident_rows(), 2 * kSmallBudget / 48 + 2 * 120 * kWorkers);
  EXPECT_EQ(Checkpoint(*memory, dir_.File("ckpt-a"), kIterations - 1),
            Checkpoint(*tiered, dir_.File("ckpt-b"), kIterations - 1));
}

// Row expiry: rows deleted at a commit leave memory and disk alike; the
// tiered shard stays bit for bit the in-memory one, a deleted key reads as
// never trained, and one that comes back starts again from its initial
// value.
TEST_F(DiskTierTest, ExpiredRowsLeaveMemoryAndDiskAlike) {
  auto memory = Make(0, "");
  auto tiered = Make(kSmallBudget, dir_.File("store"));
  ASSERT_TRUE(memory && tiered);
  Driver a(memory.get()), b(tiered.get());
  constexpr uint64_t kExpireAt = 20;
  for (uint64_t t = 0; t < kExpireAt; ++t) ASSERT_EQ(a.Iterate(t), b.Iterate(t));
  // Every third key of each table goes (rows touched this iteration too:
  // the deletion follows its writes).
  std::vector<std::vector<Key>> keys(2);
  for (Key k = 0; k < kKeysPerTable; k += 3) {
    keys[0].push_back(k);
    keys[1].push_back(k);
  }
  const std::vector<KeysIn> expire = {{0, keys[0]}, {1, keys[1]}};
  auto rows_of = [](JobShard& s) {
    proto::PsStatsResponse r;
    s.Stats(&r);
    return std::pair{r.tables(0).rows() + r.tables(1).rows(), r.rows_expired()};
  };
  const std::string trained = a.ReadEverything(kExpireAt);
  const auto [before, none] = rows_of(*tiered);
  EXPECT_EQ(none, 0u);
  ASSERT_EQ(a.Iterate(kExpireAt, expire), b.Iterate(kExpireAt, expire));
  const auto [after, expired] = rows_of(*tiered);
  EXPECT_GT(expired, 500u);
  EXPECT_LT(after, before);
  EXPECT_EQ(rows_of(*memory), rows_of(*tiered));
  const std::string read = a.ReadEverything(kExpireAt + 1);
  EXPECT_EQ(read, b.ReadEverything(kExpireAt + 1));
  // Key 3 of table 0, trained before, reads as a fresh shard's.
  auto fresh = Make(0, "");
  ASSERT_NE(fresh, nullptr);
  Driver untrained(fresh.get());
  const std::string initial = untrained.ReadEverything(0);
  const uint32_t rf0 = math::RowFloats(math::SparseOptimizerKind::kAdagrad, kDims[0]);
  EXPECT_NE(trained.substr(3 * rf0 * 4, rf0 * 4), initial.substr(3 * rf0 * 4, rf0 * 4));
  EXPECT_EQ(read.substr(3 * rf0 * 4, rf0 * 4), initial.substr(3 * rf0 * 4, rf0 * 4));
  for (uint64_t t = kExpireAt + 1; t < kExpireAt + 10; ++t) {
    ASSERT_EQ(a.Iterate(t), b.Iterate(t)) << "iteration " << t;
  }
  EXPECT_EQ(Checkpoint(*memory, dir_.File("ckpt-a"), kExpireAt + 9),
            Checkpoint(*tiered, dir_.File("ckpt-b"), kExpireAt + 9));
}

TEST_F(DiskTierTest, TheLookAheadLoadsRowsBeforeTheirIterationAndChangesNoBit) {
  auto memory = Make(0, "");
  auto tiered = Make(kSmallBudget * 4, dir_.File("store"));
  ASSERT_TRUE(memory && tiered);
  Driver a(memory.get()), b(tiered.get());
  b.LookAhead(0);
  for (uint64_t t = 0; t < kIterations; ++t) {
    b.LookAhead(t + 1);
    ASSERT_EQ(a.Iterate(t), b.Iterate(t)) << "iteration " << t;
  }
  EXPECT_EQ(a.ReadEverything(kIterations), b.ReadEverything(kIterations));
  const proto::DiskTierStats stats = TierStats(*tiered);
  EXPECT_EQ(stats.look_ahead_requests(), kIterations + 1);
  EXPECT_GT(stats.rows_evicted(), 1000u);
  std::printf("loaded ahead %llu, read on the critical path %llu\n",
              static_cast<unsigned long long>(stats.rows_loaded_ahead()),
              static_cast<unsigned long long>(stats.rows_read_on_critical_path()));
  // Loaded ahead or on the critical path (the loader races the requests;
  // how many it wins is timing), never both for one load.
  EXPECT_GT(stats.rows_loaded_ahead() + stats.rows_read_on_critical_path(), 100u);
  EXPECT_EQ(Checkpoint(*memory, dir_.File("ckpt-a"), kIterations - 1),
            Checkpoint(*tiered, dir_.File("ckpt-b"), kIterations - 1));
}

TEST_F(DiskTierTest, ACheckpointWithRowsOnDiskRestoresIntoATieredShardExactly) {
  auto memory = Make(0, "");
  auto tiered = Make(kSmallBudget, dir_.File("store"));
  ASSERT_TRUE(memory && tiered);
  Driver a(memory.get()), b(tiered.get());
  const uint64_t half = kIterations / 2;
  for (uint64_t t = 0; t < half; ++t) ASSERT_EQ(a.Iterate(t), b.Iterate(t));
  auto info = tiered->Checkpoint(dir_.path(), half - 1, absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(info.ok()) << info.status();
  proto::CheckpointManifest manifest;
  manifest.set_job_id("tiered");
  manifest.set_iteration(half - 1);
  manifest.set_num_shards(1);
  auto* entry = manifest.add_shards();
  entry->set_shard(0);
  entry->set_file(info->path.substr(info->path.rfind('/') + 1));
  entry->set_checksum(absl::StrFormat("%08x", info->crc32));
  // A new run of the job, restored from it with the same small budget: most
  // restored rows go straight to disk.
  tiered.reset();
  JobShardOptions o = Options();
  o.first_iteration = half;
  o.disk = {kSmallBudget, dir_.File("store"), {o.job_id, 0, 1}};
  auto restored = JobShard::Create(std::move(o), &pool_);
  ASSERT_TRUE(restored.ok()) << restored.status();
  auto loaded =
      RestoreShard(manifest, info->path.substr(0, info->path.rfind('/')), restored->get());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_GT(*loaded, 2000u);
  Driver c(restored->get());
  for (uint64_t t = half; t < kIterations; ++t) {
    ASSERT_EQ(a.Iterate(t), c.Iterate(t)) << "iteration " << t;
  }
  EXPECT_EQ(a.ReadEverything(kIterations), c.ReadEverything(kIterations));
}

TEST_F(DiskTierTest, TheStoreIsRemovedWhenTheJobShardGoes) {
  { auto tiered = Make(kSmallBudget, dir_.File("store")); }
  EXPECT_FALSE(std::filesystem::exists(dir_.File("store")));
}

TEST_F(DiskTierTest, LookAheadWithoutATierOrWithAnotherShardsKeyIsRefused) {
  auto memory = Make(0, "");
  EXPECT_EQ(memory->LookAhead(Iteration(1), {{0, {1, 2}}}).code(),
            absl::StatusCode::kFailedPrecondition);
  auto tiered = Make(kSmallBudget, dir_.File("store"));
  EXPECT_EQ(tiered->LookAhead(Iteration(1), {{5, {1}}}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace herald::ps
