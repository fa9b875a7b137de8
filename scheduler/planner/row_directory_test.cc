// RowDirectory: handles, the slots it keeps per worker, and which released
// entries Sweep() erases (only those no cache, batch or fetch.early needs).

#include "scheduler/planner/row_directory.h"

#include <algorithm>
#include <map>
#include <random>
#include <utility>

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

TEST(RowDirectory, OneHandlePerKeyUntilErased) {
  RowDirectory dir;
  const uint32_t a = dir.FindOrAdd(10);
  EXPECT_EQ(dir.FindOrAdd(10), a);
  EXPECT_EQ(dir.Find(10), a);
  EXPECT_EQ(dir.Find(11), RowDirectory::kNone);
  EXPECT_EQ(dir.at(a).key, 10u);
  EXPECT_EQ(dir.at(a).holder, kPsHolder);
  EXPECT_EQ(dir.size(), 1u);
}

// Entries live in fixed chunks of 1024: every entry keeps its own state
// across many chunk boundaries, handles are dense from 0, and a copy of the
// directory (Planner::Clone) holds the same entries and grows on its own.
TEST(RowDirectory, EntriesKeepTheirStateAcrossChunksAndCopies) {
  RowDirectory dir(8);
  constexpr Key kKeys = 20000;  // 20 chunks
  for (Key k = 0; k < kKeys; ++k) {
    const uint32_t h = dir.FindOrAdd(1000 + k);
    ASSERT_EQ(h, k);
    dir.at(h).holder = static_cast<int32_t>(k % 8);
    dir.SetSlot(h, static_cast<uint32_t>(k % 8), static_cast<uint32_t>(k));
  }
  RowDirectory copy = dir;
  for (Key k = 0; k < kKeys; ++k) {
    const uint32_t h = static_cast<uint32_t>(k);
    ASSERT_EQ(dir.at(h).key, 1000 + k);
    ASSERT_EQ(dir.at(h).holder, static_cast<int32_t>(k % 8));
    ASSERT_EQ(dir.SlotOf(h, static_cast<uint32_t>(k % 8)), k);
    ASSERT_EQ(copy.at(h).key, 1000 + k);
  }
  const uint32_t grown = copy.FindOrAdd(999);
  EXPECT_EQ(grown, kKeys);
  EXPECT_EQ(copy.at(grown).key, 999u);
  EXPECT_EQ(dir.Find(999), RowDirectory::kNone);
  EXPECT_EQ(copy.at(0).key, 1000u);
}

TEST(RowDirectory, KeepsSlotsInlineAndBeyond) {
  RowDirectory dir;
  const uint32_t h = dir.FindOrAdd(5);
  for (uint32_t w = 0; w < 5; ++w) dir.SetSlot(h, w, 100 + w);  // 2 inline, 3 overflow
  for (uint32_t w = 0; w < 5; ++w) EXPECT_EQ(dir.SlotOf(h, w), 100 + w);
  dir.ClearSlot(h, 0);
  dir.ClearSlot(h, 3);
  dir.SetSlot(h, 7, 77);  // reuses the freed inline place
  EXPECT_EQ(dir.SlotOf(h, 1), 101u);
  EXPECT_EQ(dir.SlotOf(h, 2), 102u);
  EXPECT_EQ(dir.SlotOf(h, 4), 104u);
  EXPECT_EQ(dir.SlotOf(h, 7), 77u);
}

TEST(RowDirectory, WidelyCachedRowsMoveToABlockAndBack) {
  for (uint32_t workers : {8u, 80u}) {
    RowDirectory dir(workers);
    const uint32_t h = dir.FindOrAdd(5);
    const uint32_t wide_after = std::max(3u, workers / 4);
    for (uint32_t w = 0; w + 1 < wide_after; ++w) dir.SetSlot(h, w, 100 + w);
    EXPECT_EQ(dir.at(h).wide, RowState::kNoWide) << workers;
    dir.SetSlot(h, workers - 1, 7);  // copy wide_after: a block
    EXPECT_NE(dir.at(h).wide, RowState::kNoWide) << workers;
    for (uint32_t w = 0; w + 1 < wide_after; ++w) EXPECT_EQ(dir.SlotOf(h, w), 100 + w);
    EXPECT_EQ(dir.SlotOf(h, workers - 1), 7u);
    // Down to half the copies: back to the entry and the overflow map.
    for (uint32_t w = 0; w + 1 < wide_after; w += 2) dir.ClearSlot(h, w);
    EXPECT_EQ(dir.at(h).wide, RowState::kNoWide) << workers;
    for (uint32_t w = 1; w + 1 < wide_after; w += 2) EXPECT_EQ(dir.SlotOf(h, w), 100 + w);
    EXPECT_EQ(dir.SlotOf(h, workers - 1), 7u);
  }
}

// Random SetSlot/ClearSlot on a few rows against a plain map, for job sizes
// whose rows stay inline, spill, and take blocks.
TEST(RowDirectory, SlotsMatchAReferenceMapUnderRandomOperations) {
  std::mt19937_64 rng(11);
  for (uint32_t workers : {3u, 8u, 40u, 80u, 256u}) {
    RowDirectory dir(workers);
    std::vector<uint32_t> handles;
    for (Key k = 0; k < 4; ++k) handles.push_back(dir.FindOrAdd(k));
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> want;  // (handle, worker) → slot
    for (int op = 0; op < 20000; ++op) {
      const uint32_t h = handles[rng() % handles.size()];
      const uint32_t w = static_cast<uint32_t>(rng() % workers);
      // Mostly adds, so rows reach many copies; then mostly removes.
      const bool add = rng() % 100 < (op < 10000 ? 70u : 30u);
      if (add) {
        const uint32_t slot = static_cast<uint32_t>(rng() % 1000);
        dir.SetSlot(h, w, slot);
        want[{h, w}] = slot;
      } else if (want.erase({h, w}) > 0) {
        dir.ClearSlot(h, w);
      }
      if (op % 97 == 0) {
        for (const auto& [hw, slot] : want) {
          ASSERT_EQ(dir.SlotOf(hw.first, hw.second), slot)
              << workers << " workers, op " << op << ", worker " << hw.second;
        }
      }
    }
  }
}

// A row's resident and newest sets keep workers 0..63 in the entry and the
// rest in side words: random changes against a model, for jobs whose sets
// fit one word, just do not (65), and need all four (256), over handles in
// several chunks and handles reused after a sweep (their words start empty).
TEST(RowDirectory, WorkerSetsMatchAModelInEveryWord) {
  for (uint32_t workers : {8u, 64u, 65u, 130u, 256u}) {
    RowDirectory dir(workers);
    constexpr uint32_t kRows = 300;
    // Entries of three chunks (each 1024): the rows take every 8th handle.
    std::vector<uint32_t> handles;
    for (uint32_t k = 0; k < 8 * kRows; ++k) {
      const uint32_t h = dir.FindOrAdd(100 + k);
      if (k % 8 == 0) handles.push_back(h);
    }
    // model[i]: worker → newest (resident when present).
    std::vector<std::map<uint32_t, bool>> model(kRows);
    std::mt19937 rng(workers);
    for (int op = 0; op < 20000; ++op) {
      const uint32_t i = rng() % kRows;
      const uint32_t h = handles[i];
      const uint32_t w = rng() % workers;
      switch (rng() % 4) {
        case 0:
          dir.AddCopy(h, w);
          model[i][w] = true;
          break;
        case 1:
          dir.RemoveCopy(h, w);
          model[i].erase(w);
          break;
        case 2:
          if (!model[i].count(w)) break;  // only a resident copy becomes newest
          dir.MarkNewest(h, w);
          model[i][w] = true;
          break;
        case 3:
          dir.ClearNewest(h);
          for (auto& [worker, newest] : model[i]) newest = false;
          break;
      }
      if (op % 2000 == 0) {  // a row leaves every cache, is swept and its handle reused
        for (const auto& [worker, newest] : model[i]) dir.RemoveCopy(h, worker);
        model[i].clear();
        dir.MaybeRelease(h);
        dir.Sweep(op);
        ASSERT_EQ(dir.Find(100 + 8 * i), RowDirectory::kNone);
        handles[i] = dir.FindOrAdd(100 + 8 * i);
        ASSERT_FALSE(dir.IsCached(handles[i]));
        ASSERT_FALSE(dir.IsNewestAnywhere(handles[i]));
      }
    }
    for (uint32_t i = 0; i < kRows; ++i) {
      const uint32_t h = handles[i];
      WorkerSet newest;
      bool any_newest = false;
      for (uint32_t w = 0; w < workers; ++w) {
        const auto it = model[i].find(w);
        ASSERT_EQ(dir.IsResident(h, w), it != model[i].end())
            << workers << " row " << i << " w " << w;
        const bool is_newest = it != model[i].end() && it->second;
        ASSERT_EQ(dir.IsNewest(h, w), is_newest) << workers << " row " << i << " w " << w;
        if (is_newest) newest.Add(w);
        any_newest |= is_newest;
      }
      EXPECT_EQ(dir.IsCached(h), !model[i].empty());
      EXPECT_EQ(dir.IsNewestAnywhere(h), any_newest);
      EXPECT_TRUE(dir.Newest<4>(h) == newest) << workers << " row " << i;
    }
  }
}

TEST(RowDirectory, SweepErasesOnlyUnneededReleasedEntries) {
  RowDirectory dir;
  const uint32_t clean = dir.FindOrAdd(1);    // released, nothing needs it
  const uint32_t cached = dir.FindOrAdd(2);   // released, then cached again
  const uint32_t pinned = dir.FindOrAdd(3);   // the next batch uses it
  const uint32_t changed = dir.FindOrAdd(4);  // PS copy changed this iteration
  const uint32_t dirty = dir.FindOrAdd(5);    // held dirty by worker 1
  const uint64_t iteration = 7;
  dir.AddCopy(cached, 0);
  dir.at(pinned).pin_stamp = iteration + 2;
  dir.at(changed).MarkPsChanged(iteration);
  dir.at(dirty).holder = 1;
  for (uint32_t h : {clean, cached, pinned, changed, dirty}) dir.MaybeRelease(h);
  dir.Sweep(iteration);
  EXPECT_EQ(dir.Find(1), RowDirectory::kNone);
  EXPECT_EQ(dir.Find(2), cached);
  EXPECT_EQ(dir.Find(3), pinned);
  EXPECT_EQ(dir.Find(4), changed);
  EXPECT_EQ(dir.at(changed).EarlyDistance(iteration + 1), 0);  // the next fetch may not go early
  EXPECT_EQ(dir.Find(5), dirty);
  // One iteration later the pin is over: it goes, without being released
  // again. The change stays known while a fetch's distance could still be
  // shorter than the longest: its entry lives on until then.
  dir.Sweep(iteration + 1);
  EXPECT_EQ(dir.Find(3), RowDirectory::kNone);
  EXPECT_EQ(dir.Find(4), changed);
  EXPECT_EQ(dir.at(changed).EarlyDistance(iteration + 2), 1);
  dir.Sweep(iteration + 2);
  EXPECT_EQ(dir.at(changed).EarlyDistance(iteration + 3), 2);
  dir.Sweep(iteration + 3);
  EXPECT_EQ(dir.Find(4), RowDirectory::kNone);
  EXPECT_EQ(dir.size(), 2u);
  static_assert(kMaxEarlyDistance == 3, "the sweeps above end at the third");
  // An erased handle is reused for the next new key, as a fresh entry.
  const uint32_t fresh = dir.FindOrAdd(9);
  EXPECT_TRUE(fresh == clean || fresh == pinned || fresh == changed);
  EXPECT_EQ(dir.at(fresh).key, 9u);
  EXPECT_EQ(dir.at(fresh).EarlyDistance(iteration + 4), kMaxEarlyDistance);
  EXPECT_FALSE(dir.IsCached(fresh));
}

// Trained marks belong to an entry: set until it is erased, never on a
// fresh entry (even one reusing an erased handle, or a new chunk's), and
// not carried through Save/Load.
TEST(RowDirectory, TrainedMarksLastAsLongAsTheEntry) {
  RowDirectory dir;
  std::vector<uint32_t> handles;
  for (Key k = 0; k < 200; ++k) handles.push_back(dir.FindOrAdd(k));
  for (uint32_t h : handles) EXPECT_FALSE(dir.MarkedTrained(h));
  for (size_t i = 0; i < handles.size(); i += 3) dir.MarkTrained(handles[i]);
  for (size_t i = 0; i < handles.size(); ++i) {
    EXPECT_EQ(dir.MarkedTrained(handles[i]), i % 3 == 0) << "key " << i;
  }
  dir.MaybeRelease(handles[63]);
  dir.Sweep(/*iteration=*/0);
  ASSERT_EQ(dir.Find(63), RowDirectory::kNone);
  const uint32_t reused = dir.FindOrAdd(1000);
  EXPECT_EQ(reused, handles[63]);
  EXPECT_FALSE(dir.MarkedTrained(reused));
  EXPECT_FALSE(dir.MarkedTrained(dir.FindOrAdd(1001)));  // handle 200: a new word
  EXPECT_TRUE(dir.MarkedTrained(handles[66]));

  StateWriter out;
  dir.Save(&out);
  RowDirectory loaded;
  const std::string bytes = out.Take();
  StateReader in(bytes);
  ASSERT_TRUE(loaded.Load(&in)) << in.status();
  EXPECT_FALSE(loaded.MarkedTrained(handles[66]));
  EXPECT_FALSE(loaded.MarkedTrained(loaded.FindOrAdd(1002)));
}

}  // namespace
}  // namespace herald::scheduler
