// Id admission and row expiry: which lookups a batch keeps, counted in
// data order across batches; which rows go after a batch; the view of an
// earlier iteration for evaluations; the state saved and loaded with a
// data cursor.
#include "scheduler/data/key_lifecycle.h"

#include <vector>

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

// One table, samples' bags given as lists of keys.
data::KeyBatch Batch(const std::vector<std::vector<Key>>& bags) {
  data::KeyBatch batch;
  batch.num_samples = static_cast<uint32_t>(bags.size());
  batch.tables.resize(2);
  for (const auto& bag : bags) {
    for (data::KeyBatch::Table& t : batch.tables) {
      t.keys.insert(t.keys.end(), bag.begin(), bag.end());
      t.offsets.push_back(static_cast<uint32_t>(t.keys.size()));
    }
  }
  return batch;
}

std::vector<std::vector<Key>> Bags(const data::KeyBatch::Table& t) {
  std::vector<std::vector<Key>> bags;
  for (size_t s = 0; s + 1 < t.offsets.size(); ++s) {
    bags.emplace_back(t.keys.begin() + t.offsets[s], t.keys.begin() + t.offsets[s + 1]);
  }
  return bags;
}

using BagList = std::vector<std::vector<Key>>;

// Table 0 admits at 2 occurrences, table 1 every key.
TEST(KeyLifecycle, AKeyHasLookupsFromTheBatchItsCountReachesTheMinimum) {
  KeyLifecycle admission(KeyLifecycle::MinCounts({2, 0}));
  data::KeyBatch b0 = Batch({{1, 2}, {1, 3}, {}});
  admission.Filter(0, &b0);
  // Key 1 reaches 2 within batch 0: both its lookups stay; 2 and 3 wait.
  EXPECT_EQ(Bags(b0.tables[0]), (BagList{{1}, {1}, {}}));
  EXPECT_EQ(Bags(b0.tables[1]), (BagList{{1, 2}, {1, 3}, {}}));
  // 3 and 2 reach 2 in batch 1 (once before, once here); 4 waits.
  data::KeyBatch b1 = Batch({{3, 4}, {2}});
  admission.Filter(1, &b1);
  EXPECT_EQ(Bags(b1.tables[0]), (BagList{{3}, {2}}));
  const KeyLifecycle::Counts c = admission.counts();
  EXPECT_EQ(c.admitted, 3u);  // 1, 2, 3
  EXPECT_EQ(c.waiting, 1u);   // 4
  EXPECT_EQ(c.dropped, 3u);   // 2 and 3 in batch 0, 4 in batch 1
  const KeyLifecycle::Counts after0 = admission.CountsThrough(0);
  EXPECT_EQ(after0.admitted, 1u);
  EXPECT_EQ(after0.waiting, 2u);
  EXPECT_EQ(after0.dropped, 2u);
}

TEST(KeyLifecycle, WeightsAndFeatureLengthsFollowTheKeptLookups) {
  KeyLifecycle admission(KeyLifecycle::MinCounts({3, 0}));
  data::KeyBatch batch;
  batch.num_samples = 2;
  batch.tables.resize(1);
  data::KeyBatch::Table& t = batch.tables[0];
  t.features = 2;
  // Sample 0: feature 0 {7, 8}, feature 1 {7}; sample 1: feature 0 {}, feature 1 {7, 9}.
  t.keys = {7, 8, 7, 7, 9};
  t.weights = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
  t.offsets = {0, 3, 5};
  t.feature_lengths = {2, 1, 0, 2};
  admission.Filter(0, &batch);  // 7 occurs 3 times: admitted; 8 and 9 not
  EXPECT_EQ(t.keys, (std::vector<Key>{7, 7, 7}));
  EXPECT_EQ(t.weights, (std::vector<float>{0.5f, 2.5f, 3.5f}));
  EXPECT_EQ(t.offsets, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_EQ(t.feature_lengths, (std::vector<uint32_t>{1, 1, 0, 1}));
}

// An evaluation after iteration t sees the keys admitted by batch t, even
// when the stream has read ahead.
TEST(KeyLifecycle, AnEvaluationSeesTheKeysAdmittedByItsIteration) {
  KeyLifecycle admission(KeyLifecycle::MinCounts({2, 0}));
  data::KeyBatch b0 = Batch({{1, 1, 2}});
  admission.Filter(0, &b0);
  data::KeyBatch b1 = Batch({{2}});
  admission.Filter(1, &b1);
  data::KeyBatch held_out = Batch({{1, 2, 5}});
  data::KeyBatch after0 = held_out, after1 = held_out;
  admission.FilterAdmittedBy(0, &after0);
  admission.FilterAdmittedBy(1, &after1);
  EXPECT_EQ(Bags(after0.tables[0]), (BagList{{1}}));
  EXPECT_EQ(Bags(after1.tables[0]), (BagList{{1, 2}}));
  EXPECT_EQ(Bags(after1.tables[1]), (BagList{{1, 2, 5}}));
  EXPECT_EQ(admission.counts().waiting, 0u) << "scoring counts nothing";
}

TEST(KeyLifecycle, SavedCountsContinueWhereTheyStood) {
  KeyLifecycle admission(KeyLifecycle::MinCounts({2, 0}));
  data::KeyBatch b0 = Batch({{1, 2}, {3}});
  admission.Filter(0, &b0);
  StateWriter out;
  admission.Save(&out);
  const std::string bytes = out.Take();

  KeyLifecycle loaded(KeyLifecycle::MinCounts({2, 0}));
  StateReader in(bytes, "data cursor");
  ASSERT_TRUE(loaded.Load(&in)) << in.status();
  EXPECT_TRUE(in.AtEnd());
  data::KeyBatch x = Batch({{2, 4}}), y = Batch({{2, 4}});
  admission.Filter(1, &x);
  loaded.Filter(1, &y);
  EXPECT_EQ(Bags(y.tables[0]), (BagList{{2}}));
  EXPECT_EQ(Bags(x.tables[0]), Bags(y.tables[0]));
  EXPECT_EQ(loaded.counts().admitted, admission.counts().admitted);
  EXPECT_EQ(loaded.counts().waiting, admission.counts().waiting);
  EXPECT_EQ(loaded.counts().dropped, admission.counts().dropped);

  KeyLifecycle other(KeyLifecycle::MinCounts({3, 0}));
  StateReader again(bytes, "data cursor");
  EXPECT_FALSE(other.Load(&again));
  EXPECT_NE(again.status().message().find("key_lifecycle.min_counts"), std::string::npos)
      << again.status();
  StateReader truncated(std::string_view(bytes).substr(0, bytes.size() - 3), "data cursor");
  EXPECT_FALSE(KeyLifecycle(KeyLifecycle::MinCounts({2, 0})).Load(&truncated));
}

// Expiry after 2 batches: a key absent from 2 consecutive batches loses
// its row after the second; one seen again in time keeps it.
TEST(KeyLifecycle, ARowGoesAfterItsKeyIsAbsentForTheGivenBatches) {
  KeyLifecycle rows({KeyRule{0, 2}, KeyRule{}});
  data::KeyBatch b0 = Batch({{1, 2}, {3}});
  rows.Filter(0, &b0);
  EXPECT_TRUE(b0.tables[0].expired.empty());
  data::KeyBatch b1 = Batch({{2}});
  rows.Filter(1, &b1);
  EXPECT_TRUE(b1.tables[0].expired.empty());
  data::KeyBatch b2 = Batch({{4}});
  rows.Filter(2, &b2);
  // 1 and 3, last seen in batch 0, are absent from batches 1 and 2.
  EXPECT_EQ(b2.tables[0].expired, (std::vector<Key>{1, 3}));
  EXPECT_TRUE(b2.tables[1].expired.empty()) << "table 1 has no expiry";
  data::KeyBatch b3 = Batch({{4}});
  rows.Filter(3, &b3);
  EXPECT_EQ(b3.tables[0].expired, (std::vector<Key>{2}));
  data::KeyBatch b4 = Batch({{1}});
  rows.Filter(4, &b4);
  EXPECT_TRUE(b4.tables[0].expired.empty());
  const KeyLifecycle::Counts c = rows.counts();
  EXPECT_EQ(c.expired, 3u);
  EXPECT_EQ(c.admitted, 2u);  // 4, and 1 again
  EXPECT_EQ(rows.CountsThrough(2).expired, 2u);
}

// A key that returns after its expiry is a new key: counted from zero and
// admitted again; a waiting key's count is forgotten the same way.
TEST(KeyLifecycle, AReturningKeyIsAdmittedAgainFromZero) {
  KeyLifecycle rows({KeyRule{2, 1}, KeyRule{}});
  data::KeyBatch b0 = Batch({{1, 1, 2}});
  rows.Filter(0, &b0);
  EXPECT_EQ(Bags(b0.tables[0]), (BagList{{1, 1}}));  // 2 waits
  data::KeyBatch b1 = Batch({{3}});
  rows.Filter(1, &b1);
  EXPECT_EQ(b1.tables[0].expired, (std::vector<Key>{1})) << "2 had no row";
  EXPECT_EQ(rows.counts().waiting, 1u);  // 3; 2's count is forgotten
  data::KeyBatch b2 = Batch({{1, 2}});
  rows.Filter(2, &b2);
  EXPECT_EQ(Bags(b2.tables[0]), (BagList{{}})) << "1 and 2 start from zero";
  data::KeyBatch b3 = Batch({{1, 2}});
  rows.Filter(3, &b3);
  EXPECT_EQ(Bags(b3.tables[0]), (BagList{{1, 2}}));
}

// An evaluation after batch t scores with the rows that existed then,
// although the stream has already expired some of them.
TEST(KeyLifecycle, AnEvaluationSeesTheRowsOfItsIteration) {
  KeyLifecycle rows({KeyRule{0, 1}, KeyRule{}});
  data::KeyBatch b0 = Batch({{1, 2}});
  rows.Filter(0, &b0);
  data::KeyBatch b1 = Batch({{2}});
  rows.Filter(1, &b1);  // 1 goes after batch 1
  data::KeyBatch b2 = Batch({{1}});
  rows.Filter(2, &b2);  // 1 is back; 2 goes after batch 2
  data::KeyBatch after0 = Batch({{1, 2, 5}}), after1 = after0, after2 = after0;
  rows.FilterAdmittedBy(0, &after0);
  rows.FilterAdmittedBy(1, &after1);
  rows.FilterAdmittedBy(2, &after2);
  EXPECT_EQ(Bags(after0.tables[0]), (BagList{{1, 2}}));
  EXPECT_EQ(Bags(after1.tables[0]), (BagList{{2}}));
  EXPECT_EQ(Bags(after2.tables[0]), (BagList{{1}}));
}

// Saved mid-stream, the expiry state continues as the unbroken one does.
TEST(KeyLifecycle, SavedSightingsExpireAsTheUnbrokenStateDoes) {
  const std::vector<KeyRule> rules = {KeyRule{2, 2}, KeyRule{0, 1}};
  KeyLifecycle unbroken(rules);
  data::KeyBatch b0 = Batch({{1, 2, 2}, {3, 1}});
  unbroken.Filter(0, &b0);
  data::KeyBatch b1 = Batch({{3}});
  unbroken.Filter(1, &b1);
  StateWriter out;
  unbroken.Save(&out);
  const std::string bytes = out.Take();
  KeyLifecycle loaded(rules);
  StateReader in(bytes, "data cursor");
  ASSERT_TRUE(loaded.Load(&in)) << in.status();
  for (uint64_t i = 2; i < 6; ++i) {
    data::KeyBatch x = Batch({{i == 4 ? Key{1} : Key{9}}}), y = x;
    unbroken.Filter(i, &x);
    loaded.Filter(i, &y);
    for (size_t t = 0; t < 2; ++t) {
      EXPECT_EQ(x.tables[t].expired, y.tables[t].expired) << "batch " << i << " table " << t;
      EXPECT_EQ(x.tables[t].keys, y.tables[t].keys) << "batch " << i << " table " << t;
    }
  }
  EXPECT_EQ(loaded.counts().expired, unbroken.counts().expired);
  EXPECT_GT(unbroken.counts().expired, 2u);
  KeyLifecycle other({KeyRule{2, 3}, KeyRule{0, 1}});
  StateReader again(bytes, "data cursor");
  EXPECT_FALSE(other.Load(&again));
}

}  // namespace
}  // namespace herald::scheduler
