// SizingKey changes exactly with what a sizing pass reads (a rewritten file
// included); saved sizings come back only for their own key, a damaged
// file is refused, and the store keeps the most recently used ones.

#include "scheduler/jobs/sizing_store.h"

#include <sys/stat.h>
#include <sys/time.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

std::string TempDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void SetMtime(const std::string& path, long seconds) {
  struct timeval times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(utimes(path.c_str(), times), 0);
}

proto::JobSpec SpecOver(const std::string& path) {
  proto::JobSpec spec;
  for (int t = 0; t < 3; ++t) spec.add_tables()->set_dim(4);
  spec.set_num_dense(2);
  spec.mutable_data()->set_format(proto::DATA_FORMAT_CRITEO_TSV);
  spec.mutable_data()->add_paths(path);
  spec.mutable_scheduling()->set_cache_fraction(0.1f);
  spec.set_global_batch_size(64);
  spec.set_seed(7);
  return spec;
}

TEST(SizingKey, ChangesWithWhatThePassReadsAndNothingElse) {
  const std::string dir = TempDir("sizing_key");
  const std::string data = dir + "/part-0.tsv";
  std::ofstream(data) << "1\t2\t3\ta\tb\tc\n";
  SetMtime(data, 1000);
  const proto::JobSpec spec = SpecOver(dir);  // a directory: its files
  auto key = SizingKey(spec, 2);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_NE(key->find(data), std::string::npos);  // the expanded file, named

  // Training choices the pass does not read: the same key.
  proto::JobSpec sweep = spec;
  sweep.mutable_sparse_optimizer()->set_learning_rate(0.5f);
  sweep.set_name("another");
  sweep.mutable_data()->set_shuffle_buffer(100000);
  sweep.mutable_scheduling()->set_policy(proto::POLICY_VANILLA);
  EXPECT_EQ(*SizingKey(sweep, 2), *key);

  // What the pass reads or computes from: another key.
  EXPECT_NE(*SizingKey(spec, 3), *key);  // workers
  proto::JobSpec other = spec;
  other.mutable_scheduling()->set_cache_fraction(0.2f);
  EXPECT_NE(*SizingKey(other, 2), *key);
  other = spec;
  other.mutable_data()->set_eval_fraction(0.05f);
  EXPECT_NE(*SizingKey(other, 2), *key);
  other = spec;
  other.set_global_batch_size(128);
  EXPECT_NE(*SizingKey(other, 2), *key);
  other = spec;
  other.set_iterations(5);  // the pass reads the batches trained
  EXPECT_NE(*SizingKey(other, 2), *key);
  SetMtime(data, 2000);  // the data changed (touched)
  EXPECT_NE(*SizingKey(spec, 2), *key);
  std::ofstream(dir + "/part-1.tsv") << "0\t1\t1\ta\tb\tc\n";  // another file
  EXPECT_NE(*SizingKey(spec, 2), *key);
  EXPECT_TRUE(absl::IsNotFound(SizingKey(SpecOver(dir + "/absent"), 2).status()));
}

TEST(SizingKey, AFileRewrittenWithItsSizeAndTimesRestoredGivesAnotherKey) {
  const std::string dir = TempDir("sizing_rewritten");
  const std::string data = dir + "/part-0.tsv";
  std::ofstream(data) << "1\t2\t3\ta\tb\tc\n";
  SetMtime(data, 1000);
  const proto::JobSpec spec = SpecOver(data);
  const std::string key = *SizingKey(spec, 2);
  struct stat before, after;
  ASSERT_EQ(stat(data.c_str(), &before), 0);
  // Other contents of the same size, the old modification time put back.
  // The kernel stamps the status-change time from a clock a few
  // milliseconds coarse: rewritten until that clock has moved (bounded).
  for (int i = 0; i < 1'000'000; ++i) {
    std::ofstream(data) << "0\t9\t3\ta\tb\tc\n";
    SetMtime(data, 1000);
    ASSERT_EQ(stat(data.c_str(), &after), 0);
    if (after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
        after.st_ctim.tv_nsec != before.st_ctim.tv_nsec) {
      break;
    }
  }
  ASSERT_EQ(after.st_size, before.st_size);
  ASSERT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_NE(*SizingKey(spec, 2), key);
}

TEST(SizingStore, ASizingComesBackOnlyForItsKeyAndDamageIsRefused) {
  const std::string dir = TempDir("sizing_store") + "/sizing";  // created by the save
  JobCacheSizing sizing;
  sizing.capacity = {10, 20, 30};
  sizing.slots = {64, 64, 96};
  sizing.warm_keys = {{1, 2}, {}, {7}};
  EXPECT_TRUE(absl::IsNotFound(LoadSizing(dir, "key-a", 3).status()));
  ASSERT_TRUE(SaveSizing(dir, "key-a", sizing).ok());
  auto loaded = LoadSizing(dir, "key-a", 3);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->capacity, sizing.capacity);
  EXPECT_EQ(loaded->slots, sizing.slots);
  EXPECT_EQ(loaded->warm_keys, sizing.warm_keys);
  EXPECT_TRUE(absl::IsNotFound(LoadSizing(dir, "key-b", 3).status()));
  EXPECT_FALSE(LoadSizing(dir, "key-a", 4).ok());  // another table count

  // One byte flipped in the only file: DataLoss, not a wrong sizing.
  const std::string file = std::filesystem::directory_iterator(dir)->path().string();
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(20);
  f.put('\x7f');
  f.close();
  const absl::Status damaged = LoadSizing(dir, "key-a", 3).status();
  EXPECT_TRUE(absl::IsDataLoss(damaged)) << damaged;
  EXPECT_NE(damaged.message().find(file), std::string::npos) << damaged;
}

TEST(SizingStore, KeepsTheMostRecentlySavedOrLoadedSizings) {
  const std::string dir = TempDir("sizing_kept");
  JobCacheSizing sizing;
  sizing.capacity = {10};
  sizing.slots = {64};
  sizing.warm_keys = {{}};
  auto files = [&] {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      names.insert(entry.path().string());
    }
    return names;
  };
  // kSizingsKept sizings, saved at times 1000, 1001, ...: key 0 the oldest.
  for (size_t i = 0; i < kSizingsKept; ++i) {
    const std::set<std::string> before = files();
    ASSERT_TRUE(SaveSizing(dir, absl::StrCat("key-", i), sizing).ok());
    for (const std::string& file : files()) {
      if (before.count(file) == 0) SetMtime(file, 1000 + static_cast<long>(i));
    }
  }
  ASSERT_EQ(files().size(), kSizingsKept);
  ASSERT_TRUE(LoadSizing(dir, "key-0", 1).ok());  // used: now the newest
  ASSERT_TRUE(SaveSizing(dir, "key-new", sizing).ok());
  EXPECT_EQ(files().size(), kSizingsKept);
  EXPECT_TRUE(absl::IsNotFound(LoadSizing(dir, "key-1", 1).status()));  // the oldest went
  EXPECT_TRUE(LoadSizing(dir, "key-0", 1).ok());
  EXPECT_TRUE(LoadSizing(dir, "key-2", 1).ok());
  EXPECT_TRUE(LoadSizing(dir, "key-new", 1).ok());
}

}  // namespace
}  // namespace herald::scheduler
