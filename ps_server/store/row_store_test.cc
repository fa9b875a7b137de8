#include "ps_server/store/row_store.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::ps {
namespace {

using data::testing::TempDir;

const RowStoreOwner kOwner{"job-a", 1, 2};

std::vector<float> RowOf(float base, uint32_t floats) {
  std::vector<float> row(floats);
  for (uint32_t i = 0; i < floats; ++i) row[i] = base + i;
  return row;
}

TEST(RowStore, RowsWrittenAreReadBackWithTheirVersions) {
  TempDir dir;
  auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
  ASSERT_TRUE(store.ok()) << store.status();
  const std::vector<float> a = RowOf(1, 6), b = RowOf(100, 6);
  ASSERT_TRUE((*store)->Put({{0, 7, 3, a.data(), 6}, {2, 7, 9, b.data(), 6}}).ok());
  std::vector<float> row(6);
  uint64_t version = 0;
  auto found = (*store)->Get(0, 7, 6, row.data(), &version);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ(row, a);
  EXPECT_EQ(version, 3u);
  found = (*store)->Get(2, 7, 6, row.data(), &version);
  ASSERT_TRUE(found.ok() && *found);
  EXPECT_EQ(row, b);
  EXPECT_EQ(version, 9u);
  found = (*store)->Get(1, 7, 6, row.data(), &version);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(*found);
  // A later write replaces the row.
  ASSERT_TRUE((*store)->Put({{0, 7, 4, b.data(), 6}}).ok());
  ASSERT_TRUE(*(*store)->Get(0, 7, 6, row.data(), &version));
  EXPECT_EQ(row, b);
  EXPECT_EQ(version, 4u);
}

TEST(RowStore, AValueOfTheWrongSizeIsDataLossNamingTheKey) {
  TempDir dir;
  auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
  ASSERT_TRUE(store.ok());
  const std::vector<float> a = RowOf(1, 6);
  ASSERT_TRUE((*store)->Put({{0, 5, 1, a.data(), 6}}).ok());
  std::vector<float> row(8);
  uint64_t version;
  auto found = (*store)->Get(0, 5, 8, row.data(), &version);
  ASSERT_EQ(found.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(found.status().message().find("key 5 of table 0"), std::string::npos);
  EXPECT_NE(found.status().message().find(dir.File("s")), std::string::npos);
}

TEST(RowStore, ACursorListsOneTableInKeyOrderAsOfItsSnapshot) {
  TempDir dir;
  auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
  ASSERT_TRUE(store.ok());
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 5; ++i) rows.push_back(RowOf(i, 3));
  // Keys whose big-endian order differs from their insertion order; one
  // above 2^56 (the top byte sorts first).
  const std::vector<Key> keys = {300, 1, 0x0100000000000000ull, 2, 256};
  std::vector<StoredRow> put;
  for (int i = 0; i < 5; ++i) put.push_back({1, keys[i], uint64_t(i), rows[i].data(), 3});
  put.push_back({0, 5, 0, rows[0].data(), 3});
  put.push_back({2, 0, 0, rows[0].data(), 3});
  ASSERT_TRUE((*store)->Put(put).ok());
  auto cursor = (*store)->Rows(1, 3);
  ASSERT_TRUE(cursor.ok());
  // Written after the cursor: not seen by it.
  ASSERT_TRUE((*store)->Put({{1, 3, 0, rows[0].data(), 3}}).ok());
  std::vector<Key> seen;
  while ((*cursor)->Valid()) {
    seen.push_back((*cursor)->key());
    if ((*cursor)->key() == 300) {
      EXPECT_EQ((*cursor)->row()[0], 0.0f);
    }
    ASSERT_TRUE((*cursor)->Next().ok());
  }
  EXPECT_EQ(seen, (std::vector<Key>{1, 2, 256, 300, 0x0100000000000000ull}));
}

TEST(RowStore, OpeningAgainForTheSameJobShardStartsEmpty) {
  TempDir dir;
  const std::vector<float> a = RowOf(1, 2);
  {
    auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put({{0, 1, 1, a.data(), 2}}).ok());
  }
  auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<float> row(2);
  uint64_t version;
  EXPECT_FALSE(*(*store)->Get(0, 1, 2, row.data(), &version));
}

TEST(RowStore, AnotherJobsStoreIsRefusedAndKept) {
  TempDir dir;
  const std::vector<float> a = RowOf(1, 2);
  {
    auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Put({{0, 1, 1, a.data(), 2}}).ok());
  }
  auto other = RowStore::Open(dir.File("s"), RowStoreOwner{"job-b", 1, 2}, 1 << 20);
  ASSERT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("belongs to job 'job-a' shard 1 of 2"), std::string::npos)
      << other.status();
  EXPECT_NE(other.status().message().find(dir.File("s")), std::string::npos);
  // Untouched: its owner still finds it (and empties it).
  EXPECT_TRUE(RowStore::Open(dir.File("s"), kOwner, 1 << 20).ok());
}

TEST(RowStore, ADirectoryOfOtherFilesIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("s"));
  std::ofstream(dir.File("s/notes.txt")) << "mine";
  auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("not a row store"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.File("s/notes.txt")));
}

TEST(RowStore, ADamagedStoreIsDataLossNamingThePath) {
  TempDir dir;
  { ASSERT_TRUE(RowStore::Open(dir.File("s"), kOwner, 1 << 20).ok()); }
  // CURRENT names the manifest RocksDB opens: point it at nothing.
  std::ofstream(dir.File("s/CURRENT"), std::ios::trunc) << "MANIFEST-999999\n";
  auto store = RowStore::Open(dir.File("s"), kOwner, 1 << 20);
  ASSERT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_NE(store.status().message().find("is damaged"), std::string::npos);
  EXPECT_NE(store.status().message().find(dir.File("s")), std::string::npos);
}

}  // namespace
}  // namespace herald::ps
