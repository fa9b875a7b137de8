#include "scheduler/planner/allocator.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

// One table, one key per sample.
data::KeyBatch OneKeyPerSample(const std::vector<Key>& keys) {
  data::KeyBatch b;
  b.num_samples = static_cast<uint32_t>(keys.size());
  b.tables.resize(1);  // offsets start as {0}
  for (Key k : keys) {
    b.tables[0].keys.push_back(k);
    b.tables[0].offsets.push_back(static_cast<uint32_t>(b.tables[0].keys.size()));
  }
  return b;
}

// Every sample's row is cached clean (newest, not dirty) by exactly one
// worker, a different one per sample, ranks assigned in reverse. With one
// sample per worker, location-aware allocation must give each sample to
// the worker caching its row, whatever the job's size: 8 (one-word worker
// sets), 70 (two words), 130 and 256 (four words).
TEST(AllocatorTest, EverySampleGoesToTheWorkerCachingItsRow) {
  for (uint32_t workers : {8u, 70u, 130u, 256u}) {
    std::vector<Key> keys;
    for (uint32_t s = 0; s < workers; ++s) keys.push_back(5000 + s);
    const data::KeyBatch batch = OneKeyPerSample(keys);
    std::vector<RowDirectory> directory(1);
    BatchIndex index;
    index.Build(batch, 0, &directory);
    for (uint32_t id = 0; id < index.num_ids(); ++id) {
      const uint32_t cacher = workers - 1 - static_cast<uint32_t>(index.key(id) - 5000);
      directory[0].AddCopy(index.row(id), cacher);
    }
    Allocator allocator(Allocation::kLocality, SyncMode::kOwnership, workers);
    CounterRng rng(1, 0, 0);
    std::vector<uint32_t> worker_of;
    allocator.Allocate(index, directory, &rng, &worker_of, TableRunner(2));
    ASSERT_EQ(worker_of.size(), workers);
    for (uint32_t s = 0; s < workers; ++s) {
      EXPECT_EQ(worker_of[s], workers - 1 - s) << workers << " workers, sample " << s;
    }
  }
}

// Equal shares whatever the costs: a row every worker caches gives no
// preference, and each worker still gets B/W samples.
TEST(AllocatorTest, EveryWorkerGetsItsShare) {
  const uint32_t workers = 70;
  std::vector<Key> keys(3 * workers + 5, 42);
  for (size_t s = 0; s < keys.size(); s += 2) keys[s] = 100 + s;
  const data::KeyBatch batch = OneKeyPerSample(keys);
  std::vector<RowDirectory> directory(1);
  BatchIndex index;
  index.Build(batch, 0, &directory);
  Allocator allocator(Allocation::kLocality, SyncMode::kOwnership, workers);
  CounterRng rng(7, 0, 0);
  std::vector<uint32_t> worker_of;
  allocator.Allocate(index, directory, &rng, &worker_of);
  std::vector<uint32_t> load(workers, 0);
  for (uint32_t w : worker_of) ++load[w];
  const uint32_t n = static_cast<uint32_t>(keys.size());
  for (uint32_t w = 0; w < workers; ++w) {
    EXPECT_EQ(load[w], uint64_t{n} * (w + 1) / workers - uint64_t{n} * w / workers) << w;
  }
}

// One table; sample s uses keys[s] (multi-hot).
data::KeyBatch Samples(const std::vector<std::vector<Key>>& keys) {
  data::KeyBatch b;
  b.num_samples = static_cast<uint32_t>(keys.size());
  b.tables.resize(1);
  for (const std::vector<Key>& sample : keys) {
    for (Key k : sample) b.tables[0].keys.push_back(k);
    b.tables[0].offsets.push_back(static_cast<uint32_t>(b.tables[0].keys.size()));
  }
  return b;
}

// Two workers, two samples each. S0 uses two rows worker 0 caches and three
// rows (k) it shares with S2; S1 two rows worker 0 caches; S2 one row
// worker 1 caches and the k rows; S3 a row nobody has. The greedy takes S0
// first (most cached rows) and, not yet knowing S2, gives it worker 0; S1
// fills worker 0, so S2 lands on worker 1 and the k rows are trained on
// both. A second pass places S0 knowing S2 is on worker 1 and moves it
// there: the k rows stay on one worker (two misses for S0's cached rows
// instead of three shared rows).
TEST(AllocatorTest, ASecondPassPlacesASampleKnowingTheSamplesAfterIt) {
  const data::KeyBatch batch = Samples({{1, 2, 10, 11, 12}, {3, 4}, {5, 10, 11, 12}, {6}});
  std::vector<RowDirectory> directory(1);
  BatchIndex index;
  index.Build(batch, 0, &directory);
  for (uint32_t id = 0; id < index.num_ids(); ++id) {
    const Key key = index.key(id);
    if (key <= 4) directory[0].AddCopy(index.row(id), 0);
    if (key == 5) directory[0].AddCopy(index.row(id), 1);
  }
  for (uint32_t passes : {1u, 2u, 3u}) {
    Allocator allocator(Allocation::kLocality, SyncMode::kOwnership, 2, passes);
    CounterRng rng(1, 0, 0);
    std::vector<uint32_t> worker_of;
    allocator.Allocate(index, directory, &rng, &worker_of);
    const std::vector<uint32_t> want =
        passes == 1 ? std::vector<uint32_t>{0, 0, 1, 1} : std::vector<uint32_t>{1, 0, 1, 0};
    EXPECT_EQ(worker_of, want) << passes << " passes";
  }
}

}  // namespace
}  // namespace herald::scheduler
