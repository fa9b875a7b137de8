// LruOrder (a lazy queue) must give exactly the least recently used slot, as
// a plain recency list does, through uses, removals and queue compactions;
// ColdestN must list what rounds of Coldest and Remove would evict.

#include "scheduler/herald/eviction_order.h"

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

// Also with use numbers renumbered every 40 uses (every 2^31 in jobs).
class LruOrderMatches : public testing::TestWithParam<uint32_t> {};

TEST_P(LruOrderMatches, ARecencyListOnRandomOperations) {
  constexpr uint32_t kSlots = 16;
  LruOrder lru(kSlots, GetParam());
  std::list<uint32_t> recency;  // least recent first
  std::vector<uint64_t> last_use(kSlots, 0);
  CounterRng rng(3, 0, 0);
  uint64_t iteration = 1;
  for (int op = 0; op < 20000; ++op) {  // many more uses than slots: compactions happen
    if (rng.NextBelow(8) == 0) ++iteration;
    const uint32_t slot = static_cast<uint32_t>(rng.NextBelow(kSlots));
    const bool resident = std::find(recency.begin(), recency.end(), slot) != recency.end();
    if (resident && rng.NextBelow(4) == 0) {
      lru.Remove(slot);
      recency.remove(slot);
    } else {
      lru.Use(slot, iteration);
      recency.remove(slot);
      recency.push_back(slot);
      last_use[slot] = iteration;
    }
    int64_t want = -1;
    if (!recency.empty() && last_use[recency.front()] != iteration) want = recency.front();
    ASSERT_EQ(lru.Coldest(iteration), want) << "operation " << op;
    // ColdestN: the recency list's front, up to the first slot used now.
    const size_t n = rng.NextBelow(6);
    std::vector<uint32_t> want_n, got_n;
    for (uint32_t slot : recency) {
      if (want_n.size() == n || last_use[slot] == iteration) break;
      want_n.push_back(slot);
    }
    lru.ColdestN(iteration, n, &got_n);
    ASSERT_EQ(got_n, want_n) << "operation " << op;
  }
}

INSTANTIATE_TEST_SUITE_P(RenumberAt, LruOrderMatches, testing::Values(1u << 31, 40u));

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
