#include "scheduler/planner/batch_index.h"

#include <map>
#include <random>

#include "common/rng.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

// A batch of `samples` samples over tables whose keys are drawn from
// `distinct[t]` keys (0–2 keys per sample), so keys repeat within the batch
// and, with thousands of distinct keys, collide in the build's memo.
data::KeyBatch RandomBatch(uint32_t samples, const std::vector<uint32_t>& distinct, uint32_t seed) {
  std::mt19937 rng(seed);
  data::KeyBatch batch;
  batch.num_samples = samples;
  batch.tables.resize(distinct.size());
  for (size_t t = 0; t < distinct.size(); ++t) {
    data::KeyBatch::Table& table = batch.tables[t];
    for (uint32_t s = 0; s < samples; ++s) {
      const uint32_t hot = rng() % 3;  // 0, 1 or 2 keys
      for (uint32_t j = 0; j < hot; ++j) {
        table.keys.push_back(Mix64(rng() % distinct[t] + 7777 * t));  // scattered keys
      }
      table.offsets.push_back(static_cast<uint32_t>(table.keys.size()));
    }
  }
  return batch;
}

// Every use's id names its key and that key's directory handle; ids of a
// table are dense, in first-use order, and count their uses — whatever the
// table's size: a few keys (every use a repeat), and thousands (repeats and
// collisions in the memo of repeated keys), over two builds in a row.
TEST(BatchIndexTest, IdsNameTheirKeysInFirstUseOrderWithTheirUses) {
  const std::vector<uint32_t> distinct = {3, 40, 3000, 50000};
  std::vector<RowDirectory> directory(distinct.size());
  BatchIndex index;
  for (uint64_t iteration = 0; iteration < 2; ++iteration) {
    const data::KeyBatch batch = RandomBatch(6000, distinct, static_cast<uint32_t>(iteration));
    index.Build(batch, iteration, &directory, TableRunner(2));
    ASSERT_EQ(index.num_tables(), distinct.size());
    for (uint32_t t = 0; t < index.num_tables(); ++t) {
      const data::KeyBatch::Table& table = batch.tables[t];
      const std::vector<uint32_t>& ids = index.ids(t);
      ASSERT_EQ(ids.size(), table.keys.size());
      std::map<Key, uint32_t> id_of, uses;
      uint32_t next = index.begin(t);
      for (size_t i = 0; i < ids.size(); ++i) {
        const Key key = table.keys[i];
        auto [it, first] = id_of.emplace(key, next);
        if (first) ++next;
        ASSERT_EQ(ids[i], it->second) << "table " << t << " use " << i;
        ASSERT_EQ(index.key(ids[i]), key);
        ASSERT_EQ(index.row(ids[i]), directory[t].Find(key));
        ++uses[key];
      }
      ASSERT_EQ(next, index.begin(t + 1)) << "table " << t << ": one id per distinct key";
      for (const auto& [key, n] : uses) ASSERT_EQ(index.uses(id_of[key]), n);
    }
  }
}

// Built in steps (tables indexed in reverse order, as side work would take
// them in any order), the index is the one Build makes: same ids, keys,
// handles and uses.
TEST(BatchIndexTest, BuildingInStepsGivesTheSameIndex) {
  const std::vector<uint32_t> distinct = {5, 300, 20000};
  std::vector<RowDirectory> dir_a(distinct.size()), dir_b(distinct.size());
  BatchIndex a, b;
  for (uint64_t iteration = 0; iteration < 3; ++iteration) {
    const data::KeyBatch batch = RandomBatch(3000, distinct, static_cast<uint32_t>(10 + iteration));
    a.Build(batch, iteration, &dir_a);
    b.Start(batch);
    for (uint32_t t = static_cast<uint32_t>(distinct.size()); t-- > 0;) {
      b.IndexTable(batch, t, iteration, &dir_b[t]);
    }
    b.Finish(TableRunner(2));
    ASSERT_EQ(a.num_ids(), b.num_ids());
    ASSERT_EQ(a.num_samples(), b.num_samples());
    for (uint32_t t = 0; t < a.num_tables(); ++t) {
      ASSERT_EQ(a.begin(t), b.begin(t));
      ASSERT_EQ(a.ids(t), b.ids(t));
      ASSERT_EQ(a.offsets(t), b.offsets(t));
    }
    for (uint32_t id = 0; id < a.num_ids(); ++id) {
      ASSERT_EQ(a.key(id), b.key(id));
      ASSERT_EQ(a.row(id), b.row(id));  // the directories grew alike
      ASSERT_EQ(a.uses(id), b.uses(id));
    }
  }
}

}  // namespace
}  // namespace herald::scheduler
