// LruOrder (a lazy queue) must give exactly the least recently used slot, as
// a plain recency list does, through uses, removals and queue compactions.

#include "scheduler/herald/eviction_order.h"

#include <algorithm>
#include <list>

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

TEST(LruOrder, MatchesARecencyListOnRandomOperations) {
  constexpr uint32_t kSlots = 16;
  LruOrder lru(kSlots);
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
  }
}

}  // namespace
}  // namespace herald::scheduler
