#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::checkpoint {
namespace {

using data::testing::ReadFileOrDie;
using data::testing::TempDir;
using data::testing::WriteFile;

struct Row {
  uint32_t table;
  Key key;
  uint64_t version;
  std::vector<float> values;
  bool operator==(const Row& o) const {
    return table == o.table && key == o.key && version == o.version && values == o.values;
  }
};

std::string WriteSample(const std::string& path) {
  auto w = ShardFileWriter::Create(path, {"job-1", 1, 3, 41, 2});
  EXPECT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*w)->BeginTable({0, 2, 4, 1, 2}).ok());
  const float a[4] = {1, 2, 3, 4}, b[4] = {-1, -2, 0.5f, 0.25f};
  EXPECT_TRUE((*w)->AppendRow(10, 3, a).ok());
  EXPECT_TRUE((*w)->AppendRow(20, 0, b).ok());
  EXPECT_TRUE((*w)->BeginTable({1, 3, 3, 0, 1}).ok());
  EXPECT_TRUE((*w)->AppendRow(5, 9, a).ok());
  auto info = (*w)->Finish();
  EXPECT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->rows, 3u);
  return info->path;
}

absl::StatusOr<std::vector<Row>> ReadAll(const std::string& path, ShardFileHeader* header) {
  std::vector<Row> rows;
  ShardTableHeader current;
  auto info = ReadShardFile(
      path, header,
      [&](const ShardTableHeader& t) {
        current = t;
        return absl::OkStatus();
      },
      [&](Key k, uint64_t v, const float* r) {
        rows.push_back({current.table_id, k, v, std::vector<float>(r, r + current.row_floats)});
        return absl::OkStatus();
      });
  if (!info.ok()) return info.status();
  return rows;
}

TEST(ShardFile, RoundTripsRowsAndHeader) {
  TempDir dir;
  const std::string path = WriteSample(dir.File("s.hsf"));
  ShardFileHeader h;
  auto rows = ReadAll(path, &h);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(h.job_id, "job-1");
  EXPECT_EQ(h.shard, 1u);
  EXPECT_EQ(h.num_shards, 3u);
  EXPECT_EQ(h.iteration, 41u);
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0], (Row{0, 10, 3, {1, 2, 3, 4}}));
  EXPECT_EQ((*rows)[1], (Row{0, 20, 0, {-1, -2, 0.5f, 0.25f}}));
  EXPECT_EQ((*rows)[2], (Row{1, 5, 9, {1, 2, 3}}));
  // No temporary file is left behind.
  struct stat st;
  EXPECT_NE(::stat((path + ".tmp-" + std::to_string(::getpid())).c_str(), &st), 0);
}

TEST(ShardFile, DetectsCorruptionAndTruncation) {
  TempDir dir;
  const std::string path = WriteSample(dir.File("s.hsf"));
  const std::string good = ReadFileOrDie(path);
  ShardFileHeader h;
  std::string flipped = good;
  flipped[90] ^= 0x01;  // a value of the first row
  WriteFile(path, flipped);
  auto r = ReadAll(path, &h);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("checksum mismatch"), std::string::npos) << r.status();

  WriteFile(path, good.substr(0, good.size() - 30));
  r = ReadAll(path, &h);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("truncated at byte"), std::string::npos) << r.status();

  WriteFile(path, "not a checkpoint at all");
  EXPECT_NE(ReadAll(path, &h).status().message().find("bad magic"), std::string::npos);
  EXPECT_EQ(ReadAll(dir.File("missing"), &h).status().code(), absl::StatusCode::kNotFound);
}

TEST(ShardFile, AbandonedWriterLeavesNoFile) {
  TempDir dir;
  {
    auto w = ShardFileWriter::Create(dir.File("s.hsf"), {"j", 0, 1, 0, 1});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->BeginTable({0, 1, 1, 0, 5}).ok());
    EXPECT_EQ((*w)->Finish().status().code(), absl::StatusCode::kFailedPrecondition);
  }
  struct stat st;
  EXPECT_NE(::stat(dir.File("s.hsf").c_str(), &st), 0);
}

TEST(Manifest, PruningKeepsTheNewestCompleteCheckpointsAndOneBeingWritten) {
  TempDir dir;
  auto complete = [&](uint64_t it) {
    proto::CheckpointManifest m;
    m.set_job_id("ctr");
    m.set_iteration(it);
    m.set_num_shards(1);
    m.add_shards()->set_file(ShardFileName(0, 1));
    ASSERT_TRUE(WriteManifest(dir.path(), m).ok());
  };
  auto unfinished = [&](uint64_t it) {
    ASSERT_TRUE(MakeDirs(CheckpointIterationDir(dir.path(), "ctr", it)).ok());
  };
  unfinished(1);
  complete(2);
  complete(5);
  unfinished(6);
  complete(8);
  unfinished(9);  // newer than every complete one: perhaps being written
  auto removed = PruneCheckpoints(dir.path(), "ctr", 2);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 3);  // 1, 2 and 6
  for (uint64_t it : {1u, 2u, 6u}) {
    EXPECT_FALSE(std::filesystem::exists(CheckpointIterationDir(dir.path(), "ctr", it))) << it;
  }
  for (uint64_t it : {5u, 8u, 9u}) {
    EXPECT_TRUE(std::filesystem::exists(CheckpointIterationDir(dir.path(), "ctr", it))) << it;
  }
  EXPECT_EQ(*PruneCheckpoints(dir.path(), "ctr", 0), 0);  // 0 keeps everything
  EXPECT_EQ(*PruneCheckpoints(dir.path(), "none", 2), 0);
}

TEST(Manifest, WritesReadsAndFindsTheLatestCompleteCheckpoint) {
  TempDir dir;
  for (uint64_t it : {4u, 12u}) {
    proto::CheckpointManifest m;
    m.set_job_id("ctr");
    m.set_iteration(it);
    m.set_num_shards(2);
    for (uint32_t s = 0; s < 2; ++s) {
      auto* e = m.add_shards();
      e->set_shard(s);
      e->set_file(ShardFileName(s, 2));
      e->set_checksum("0badc0de");
    }
    auto path = WriteManifest(dir.path(), m);
    ASSERT_TRUE(path.ok()) << path.status();
    EXPECT_EQ(*path, dir.path() + "/ctr/iter-" +
                         std::string(it == 4 ? "000000000004" : "000000000012") + "/MANIFEST");
  }
  // An unfinished, later checkpoint (shard files, no manifest) is ignored.
  ASSERT_TRUE(MakeDirs(CheckpointIterationDir(dir.path(), "ctr", 13)).ok());
  WriteFile(CheckpointIterationDir(dir.path(), "ctr", 13) + "/" + ShardFileName(0, 2), "partial");
  auto latest = FindLatestManifest(dir.path(), "ctr");
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, ManifestPath(dir.path(), "ctr", 12));
  auto m = ReadManifest(*latest);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->iteration(), 12u);
  EXPECT_EQ(m->shards(1).file(), "shard-00001-of-00002.hsf");
  EXPECT_EQ(FindLatestManifest(dir.path(), "other").status().code(), absl::StatusCode::kNotFound);

  WriteFile(dir.File("bad"), "job_id: \"x\" num_shards: 2 shards { shard: 0 file: \"a\" }");
  EXPECT_NE(ReadManifest(dir.File("bad")).status().message().find("lists 1 shard files for 2"),
            std::string::npos);
}

}  // namespace
}  // namespace herald::checkpoint
