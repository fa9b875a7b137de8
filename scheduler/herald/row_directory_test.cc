// RowDirectory: handles, the slots it keeps per worker, and which released
// entries Sweep() erases (only those no cache, batch or fetch_early needs).

#include "scheduler/herald/row_directory.h"

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

TEST(RowDirectory, SweepErasesOnlyUnneededReleasedEntries) {
  RowDirectory dir;
  const uint32_t clean = dir.FindOrAdd(1);      // released, nothing needs it
  const uint32_t cached = dir.FindOrAdd(2);     // released, then cached again
  const uint32_t pinned = dir.FindOrAdd(3);     // the next batch uses it
  const uint32_t changed = dir.FindOrAdd(4);    // PS copy changed this iteration
  const uint32_t dirty = dir.FindOrAdd(5);      // held dirty by worker 1
  const uint64_t iteration = 7;
  dir.at(cached).resident.Add(0);
  dir.at(pinned).pin_stamp = iteration + 2;
  dir.at(changed).MarkPsChanged(iteration);
  dir.at(dirty).holder = 1;
  for (uint32_t h : {clean, cached, pinned, changed, dirty}) dir.MaybeRelease(h);
  dir.Sweep(iteration);
  EXPECT_EQ(dir.Find(1), RowDirectory::kNone);
  EXPECT_EQ(dir.Find(2), cached);
  EXPECT_EQ(dir.Find(3), pinned);
  EXPECT_EQ(dir.Find(4), changed);
  EXPECT_TRUE(dir.at(changed).PsChangedBefore(iteration + 1));  // the next fetch may not go early
  EXPECT_EQ(dir.Find(5), dirty);
  // One iteration later the pin and the change are over: both go, without
  // being released again; the cached and the dirty ones stay.
  dir.Sweep(iteration + 1);
  EXPECT_EQ(dir.Find(3), RowDirectory::kNone);
  EXPECT_EQ(dir.Find(4), RowDirectory::kNone);
  EXPECT_EQ(dir.size(), 2u);
  // An erased handle is reused for the next new key, as a fresh entry.
  const uint32_t fresh = dir.FindOrAdd(9);
  EXPECT_TRUE(fresh == clean || fresh == pinned || fresh == changed);
  EXPECT_EQ(dir.at(fresh).key, 9u);
  EXPECT_FALSE(dir.at(fresh).PsChangedBefore(iteration + 1));
  EXPECT_TRUE(dir.at(fresh).resident.Empty());
}

}  // namespace
}  // namespace herald::scheduler
