#include "scheduler/planner/cache_refill.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/planner/plan_digest.h"
#include "scheduler/planner/plan_replay.h"

namespace herald::scheduler {
namespace {

// Skewed keys over 2 tables, 64 samples per batch: caches fill, rows move.
std::vector<data::KeyBatch> Batches(size_t n) {
  std::mt19937_64 rng(11);
  std::vector<data::KeyBatch> batches(n);
  for (data::KeyBatch& b : batches) {
    b.num_samples = 64;
    b.tables.resize(2);
    for (uint32_t s = 0; s < b.num_samples; ++s) {
      b.labels.push_back(0.0f);
      for (uint32_t t = 0; t < 2; ++t) {
        for (int k = 0; k < 3; ++k) {
          const uint64_t r = rng() % 1000;
          b.tables[t].keys.push_back(r * r / 2000);  // small keys far more often
        }
        b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
      }
    }
  }
  return batches;
}

PlannerOptions Options(bool handoff) {
  PlannerOptions o;
  o.policy = *PolicyByName("herald");
  o.num_workers = 3;
  o.capacity.assign(2, 96);
  o.slots.assign(2, 512);
  o.handoff = handoff;
  o.flush_every = {5};  // a checkpoint after iterations 4, 9, 14
  return o;
}

// A job resumed after the checkpoint of iteration 9: its planner, replayed
// over iterations 0-9, plans 10 onwards exactly as the uninterrupted one
// did (same digests; iteration 10's plan differs only by the refill), and
// its plans with the refill run on workers whose caches start empty.
TEST(CacheRefill, AReplayedPlannerPlansAsTheUninterruptedOneOnRefilledCaches) {
  for (bool handoff : {false, true}) {
    SCOPED_TRACE(handoff ? "hand-offs" : "no hand-offs");
    const PlannerOptions options = Options(handoff);
    const std::vector<data::KeyBatch> batches = Batches(20);
    constexpr size_t kResumeAt = 10;
    auto uninterrupted = Planner::Create(options);
    auto resumed = Planner::Create(options);
    ASSERT_TRUE(uninterrupted.ok() && resumed.ok());
    PlanReplay restarted(options.num_workers, options.slots);  // empty caches
    uint64_t refilled = 0;
    for (size_t i = 0; i < batches.size(); ++i) {
      const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
      auto a = (*uninterrupted)->Plan(batches[i], next);
      ASSERT_TRUE(a.ok()) << a.status();
      const CachedRows before = CachedRowsOf(**resumed);
      auto b = (*resumed)->Plan(batches[i], next);
      ASSERT_TRUE(b.ok()) << b.status();
      if (i < kResumeAt) continue;  // the replay: planner state only
      EXPECT_EQ(PlanDigest(*a, 0), PlanDigest(*b, 0)) << "iteration " << i;
      if (i == kResumeAt) {
        refilled = AddCacheRefill(before, **resumed, &*b);
        uint64_t fetched_a = 0, fetched_b = 0;
        for (uint32_t w = 0; w < options.num_workers; ++w) {
          fetched_a += a->workers[w].counts.fetched;
          fetched_b += b->workers[w].counts.fetched;
        }
        EXPECT_EQ(fetched_b, fetched_a + refilled);
      }
      std::vector<PlanCounts> counts;
      const absl::Status checked = restarted.Check(batches[i], *b, &counts);
      ASSERT_TRUE(checked.ok()) << "iteration " << i << ": " << checked;
    }
    EXPECT_TRUE(restarted.CheckFinal().ok());
    // The caches were warm at the checkpoint: the refill is most of them.
    EXPECT_GT(refilled, options.num_workers * 2 * options.capacity[0] / 2);
  }
}

// Without a refill the same plan cannot run on empty caches: the checker
// catches a worker training a row its cache does not hold.
TEST(CacheRefill, WithoutTheRefillTheResumedPlanDoesNotRun) {
  const PlannerOptions options = Options(false);
  const std::vector<data::KeyBatch> batches = Batches(12);
  auto resumed = Planner::Create(options);
  ASSERT_TRUE(resumed.ok());
  for (size_t i = 0; i < 10; ++i) ASSERT_TRUE((*resumed)->Plan(batches[i], &batches[i + 1]).ok());
  auto plan = (*resumed)->Plan(batches[10], &batches[11]);
  ASSERT_TRUE(plan.ok());
  PlanReplay restarted(options.num_workers, options.slots);
  std::vector<PlanCounts> counts;
  EXPECT_FALSE(restarted.Check(batches[10], *plan, &counts).ok());
}

}  // namespace
}  // namespace herald::scheduler
