#include "scheduler/planner/cheapest_worker.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

using Lanes = CheapestWorker::Lanes;

// Picks what a plain scan picks: the k-th of the least-cost workers in rank
// order, k drawn from the same stream (no draw when one worker is cheapest).
// Sizes 1..300 cover every tail of the groups of four and eight and up to
// five 64-bit tie words; few and many ties, negative costs, full workers
// (kClosed) and all-full but one.
void ExpectPlainScanChoices(Lanes lanes) {
  CheapestWorker cheapest(lanes);
  CounterRng values(7, 1, 0);
  for (uint32_t n = 1; n <= 300; ++n) {
    for (int round = 0; round < 24; ++round) {
      std::vector<int32_t> cost(n);
      const uint32_t spread = 1 + values.NextBelow(6);  // 1: everyone ties
      const uint32_t full_one_in = round == 0 ? 1 : 5;  // round 0: all full…
      for (int32_t& c : cost) {
        c = values.NextBelow(full_one_in) == 0 ? CheapestWorker::kClosed
                                               : -static_cast<int32_t>(values.NextBelow(spread));
      }
      if (round == 0) cost[values.NextBelow(n)] = 3;                 // …but one
      if (values.NextBelow(3) == 0) cost[values.NextBelow(n)] -= 9;  // one best worker
      int32_t least = CheapestWorker::kClosed;
      for (int32_t c : cost) least = std::min(least, c);
      std::vector<uint32_t> tied;
      for (uint32_t w = 0; w < n; ++w) {
        if (cost[w] == least) tied.push_back(w);
      }
      CounterRng want_rng(3, n, static_cast<uint64_t>(round));
      CounterRng got_rng = want_rng;
      const uint32_t want =
          tied.size() == 1 ? tied[0] : tied[want_rng.NextBelow(static_cast<uint32_t>(tied.size()))];
      ASSERT_EQ(cheapest.Pick(cost.data(), n, &got_rng), want) << "n " << n << " round " << round;
      ASSERT_EQ(got_rng.NextBelow(1000000), want_rng.NextBelow(1000000))
          << "the same draws, n " << n << " round " << round;
    }
  }
}

TEST(CheapestWorkerTest, FourLanesPickWhatAPlainScanPicks) { ExpectPlainScanChoices(Lanes::kFour); }

TEST(CheapestWorkerTest, EightLanesPickWhatAPlainScanPicks) {
  if (!CheapestWorker::CpuHasAvx2()) {
    GTEST_SKIP() << "SKIPPED: this CPU has no AVX2; the eight-lane path is not exercised here";
  }
  ExpectPlainScanChoices(Lanes::kEight);
}

TEST(CheapestWorkerTest, BestLanesPickWhatAPlainScanPicks) { ExpectPlainScanChoices(Lanes::kBest); }

}  // namespace
}  // namespace herald::scheduler
