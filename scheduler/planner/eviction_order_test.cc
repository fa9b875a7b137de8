// LruOrder (a lazy queue) must give exactly the least recently used clean
// slot, then the least recently used dirty one, as a plain recency list with
// dirty flags does, through uses, removals, dirtiness changes and queue
// compactions; ColdestN must list what rounds of Coldest and Remove would
// evict.

#include "scheduler/planner/eviction_order.h"

#include <algorithm>
#include <list>
#include <memory>
#include <vector>

#include "common/rng.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

TEST(LruOrder, NeverOffersASlotUsedThisIteration) {
  LruOrder lru(4);
  lru.Use(2, 0);
  lru.Use(1, 0);
  EXPECT_EQ(lru.Coldest(1), 2);
  lru.Use(2, 1);
  EXPECT_EQ(lru.Coldest(1), 1);
  lru.Use(1, 1);
  EXPECT_EQ(lru.Coldest(1), -1);  // both used at iteration 1
  lru.Remove(2);
  EXPECT_EQ(lru.Coldest(2), 1);
  lru.Remove(1);
  EXPECT_EQ(lru.Coldest(2), -1);  // nothing resident
}

TEST(LruOrder, OffersCleanSlotsBeforeDirtyOnes) {
  LruOrder lru(4);
  lru.Use(0, 1);
  lru.Use(1, 1);
  lru.SetDirty(1, true);  // trained at iteration 1 by this worker alone
  lru.Use(2, 1);
  lru.SetDirty(0, true);
  lru.Use(3, 2);
  std::vector<uint32_t> order;
  lru.ColdestN(2, 4, &order);
  EXPECT_EQ(order, (std::vector<uint32_t>{2, 0, 1}));  // 3 was used at iteration 2
  lru.SetDirty(1, false);                              // written back: clean, and older than 2
  order.clear();
  lru.ColdestN(2, 4, &order);
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 0}));
  lru.Remove(1);
  lru.Use(1, 2);  // a new row in the freed slot starts clean
  EXPECT_EQ(lru.Coldest(2), 2);
  lru.Remove(2);
  EXPECT_EQ(lru.Coldest(2), 0);
}

// Also with use numbers renumbered every 40 uses (every 2^28 in jobs).
class LruOrderMatches : public testing::TestWithParam<uint32_t> {};

TEST_P(LruOrderMatches, ARecencyListOnRandomOperations) {
  constexpr uint32_t kSlots = 16;
  LruOrder lru(kSlots, GetParam());
  std::list<uint32_t> recency;  // least recent first
  std::vector<uint64_t> last_use(kSlots, 0);
  std::vector<bool> dirty(kSlots, false);
  CounterRng rng(3, 0, 0);
  uint64_t iteration = 1;
  for (int op = 0; op < 40000; ++op) {  // many more uses than slots: compactions happen
    if (rng.NextBelow(8) == 0) ++iteration;
    const uint32_t slot = static_cast<uint32_t>(rng.NextBelow(kSlots));
    const bool resident = std::find(recency.begin(), recency.end(), slot) != recency.end();
    const uint64_t action = rng.NextBelow(8);
    if (rng.NextBelow(400) == 0) {
      lru.MarkAllClean();  // the final flush
      std::fill(dirty.begin(), dirty.end(), false);
    } else if (resident && action == 0) {
      lru.Remove(slot);
      recency.remove(slot);
      dirty[slot] = false;
    } else if (resident && action == 1 && dirty[slot]) {
      lru.SetDirty(slot, false);  // written back or handed off, at any time
      dirty[slot] = false;
    } else {
      lru.Use(slot, iteration);
      recency.remove(slot);
      recency.push_back(slot);
      last_use[slot] = iteration;
      if (action <= 3) {
        lru.SetDirty(slot, true);  // trained: only right after a use
        dirty[slot] = true;
      }
    }
    // Clean slots least recently used first, then dirty ones; none used now.
    std::vector<uint32_t> want_all;
    for (bool want_dirty : {false, true}) {
      for (uint32_t s : recency) {
        if (dirty[s] == want_dirty && last_use[s] != iteration) want_all.push_back(s);
      }
    }
    const int64_t want = want_all.empty() ? -1 : int64_t{want_all[0]};
    ASSERT_EQ(lru.Coldest(iteration), want) << "operation " << op;
    const size_t n = rng.NextBelow(kSlots);
    std::vector<uint32_t> got_n;
    lru.ColdestN(iteration, n, &got_n);
    want_all.resize(std::min(n, want_all.size()));
    ASSERT_EQ(got_n, want_all) << "operation " << op;
  }
}

INSTANTIATE_TEST_SUITE_P(RenumberAt, LruOrderMatches, testing::Values(1u << 28, 40u));

// Evicting ColdestN's slots in order is what Coldest + Remove rounds do,
// for both orders, while slots used at the current iteration stay.
TEST(EvictionOrder, ColdestNMatchesRoundsOfColdestAndRemove) {
  for (EvictionKind kind : {EvictionKind::kLru, EvictionKind::kLfu}) {
    constexpr uint32_t kSlots = 32;
    std::unique_ptr<EvictionOrder> order = MakeEvictionOrder(kind, kSlots);
    CounterRng rng(5, 0, 0);
    uint64_t iteration = 1;
    for (int op = 0; op < 3000; ++op) {
      if (rng.NextBelow(10) == 0) ++iteration;
      const uint32_t slot = static_cast<uint32_t>(rng.NextBelow(kSlots));
      order->Use(slot, iteration);
      if (rng.NextBelow(3) == 0) order->SetDirty(slot, true);
      const uint32_t other = static_cast<uint32_t>(rng.NextBelow(kSlots));
      if (rng.NextBelow(4) == 0) order->SetDirty(other, false);
      if (op % 50 != 49) continue;
      const size_t n = rng.NextBelow(kSlots);
      std::vector<uint32_t> batch;
      order->ColdestN(iteration, n, &batch);
      std::unique_ptr<EvictionOrder> rounds = order->Clone();
      std::vector<uint32_t> one_by_one;
      while (one_by_one.size() < n) {
        const int64_t victim = rounds->Coldest(iteration);
        if (victim < 0) break;
        one_by_one.push_back(static_cast<uint32_t>(victim));
        rounds->Remove(static_cast<uint32_t>(victim));
      }
      ASSERT_EQ(batch, one_by_one) << EvictionKindName(kind) << " operation " << op;
      for (uint32_t victim : batch) order->Remove(victim);
    }
  }
}

}  // namespace
}  // namespace herald::scheduler
