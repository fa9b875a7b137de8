#include "scheduler/planner/table_profiler.h"

#include "gtest/gtest.h"
#include "scheduler/planner/plan_replay.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {
namespace {

// Batch b of 4 samples: table 0 gives sample s key 10·b + s and repeats the
// previous batch's keys for samples 2 and 3 (each key used at most twice:
// infrequent); table 1 gives every sample key 7 (one hot row).
data::KeyBatch TwoTableBatch(uint32_t b) {
  data::KeyBatch batch;
  batch.num_samples = 4;
  batch.labels.assign(4, 0.0f);
  batch.tables.resize(2);
  for (uint32_t s = 0; s < 4; ++s) {
    const Key k0 = s < 2 || b == 0 ? 10 * b + s : 10 * (b - 1) + s - 2;
    batch.tables[0].keys.push_back(k0);
    batch.tables[0].offsets.push_back(s + 1);
    batch.tables[1].keys.push_back(7);
    batch.tables[1].offsets.push_back(s + 1);
  }
  return batch;
}

// Builds the index of `batch` and marks every row of it cached at worker 0,
// as the planner would after training it.
void ObserveCached(const data::KeyBatch& batch, uint64_t iteration, TableProfiler* profiler,
                   std::vector<RowDirectory>* directory) {
  BatchIndex index;
  index.Build(batch, iteration, directory);
  profiler->Observe(index, *directory);
  for (uint32_t t = 0; t < index.num_tables(); ++t) {
    for (uint32_t id = index.begin(t); id < index.begin(t + 1); ++id) {
      (*directory)[t].AddCopy(index.row(id), 0);
    }
  }
}

TEST(TableProfilerTest, RanksTheInfrequentTableFirst) {
  AdaptiveOptions o;
  o.top_k = 1;
  o.profile_every = 2;
  TableProfiler profiler(2, 2, o);
  std::vector<RowDirectory> directory(2);
  EXPECT_EQ(profiler.k(), 2u) << "every table scored before the first ranking";
  for (uint32_t b = 0; b < 6; ++b) ObserveCached(TwoTableBatch(b), b, &profiler, &directory);
  // Table 0's cached rows are used twice at most, below the samples per
  // worker (2 per batch); table 1's one row is used 4 times per batch.
  EXPECT_DOUBLE_EQ(profiler.doi(0), 1.0);
  EXPECT_DOUBLE_EQ(profiler.doi(1), 0.0);
  EXPECT_EQ(profiler.k(), 1u);
  EXPECT_EQ(profiler.scored(), (std::vector<bool>{true, false}));
  EXPECT_TRUE(profiler.budget_reachable()) << "a fixed top-k has no budget to miss";
}

TEST(TableProfilerTest, TheBudgetChoosesHowManyTablesAreScored) {
  // Cost model: 1 ns per key use of the batch (8) + 1000 ns per scorable use.
  // Table 0 has 4 scorable uses per batch (keys used ≤ 2 times), table 1
  // none (key 7 is used 4 times > 2 workers).
  for (const auto& [budget_ms, want_k] : std::vector<std::pair<double, uint32_t>>{
           {0.000001, 0}, {0.001, 0}, {0.004, 0}, {0.00401, 2}, {1.0, 2}}) {
    AdaptiveOptions o;
    o.budget_ms = budget_ms;
    o.profile_every = 1;
    o.base_ns_per_use = 1;
    o.score_ns_per_use = 1000;
    TableProfiler profiler(2, 2, o);
    std::vector<RowDirectory> directory(2);
    for (uint32_t b = 0; b < 3; ++b) ObserveCached(TwoTableBatch(b), b, &profiler, &directory);
    EXPECT_EQ(profiler.k(), want_k) << "budget " << budget_ms << " ms";
    const double want_ms = (8.0 + (want_k > 0 ? 4000.0 : 0.0)) / 1e6;
    EXPECT_NEAR(profiler.predicted_ms(), want_ms, 1e-12);
    // Only a budget below the base cost (8 ns) cannot be met.
    EXPECT_EQ(profiler.budget_reachable(), budget_ms >= 8e-6) << "budget " << budget_ms << " ms";
  }
}

PlannerOptions AdaptiveOptionsFor(const std::string& policy, uint32_t top_k) {
  PlannerOptions o;
  o.policy = *PolicyByName(policy);
  o.num_workers = 2;
  o.capacity = {4, 4};
  o.slots = {8, 8};
  o.adaptive.top_k = top_k;
  o.adaptive.profile_every = 2;
  return o;
}

TEST(HeraldAdaptiveTest, ScoringEveryTablePlansExactlyLikeHerald) {
  auto adaptive = Planner::Create(AdaptiveOptionsFor("herald-adaptive", 2));
  auto herald = Planner::Create(AdaptiveOptionsFor("herald", 0));
  ASSERT_TRUE(adaptive.ok() && herald.ok());
  for (uint32_t b = 0; b < 8; ++b) {
    const data::KeyBatch batch = TwoTableBatch(b), next = TwoTableBatch(b + 1);
    auto a = (*adaptive)->Plan(batch, &next);
    auto h = (*herald)->Plan(batch, &next);
    ASSERT_TRUE(a.ok() && h.ok());
    for (uint32_t w = 0; w < 2; ++w) EXPECT_EQ(a->workers[w].samples, h->workers[w].samples);
  }
  ASSERT_NE((*adaptive)->profiler(), nullptr);
  EXPECT_EQ((*herald)->profiler(), nullptr);
}

TEST(HeraldAdaptiveTest, PlansStayExactWhateverTablesAreScored) {
  for (uint32_t top_k : {1u, 2u}) {
    auto planner = Planner::Create(AdaptiveOptionsFor("herald-adaptive", top_k));
    ASSERT_TRUE(planner.ok());
    PlanReplay checker(2, {8, 8});
    for (uint32_t b = 0; b < 10; ++b) {
      const data::KeyBatch batch = TwoTableBatch(b), next = TwoTableBatch(b + 1);
      auto plan = (*planner)->Plan(batch, b < 9 ? &next : nullptr);
      ASSERT_TRUE(plan.ok()) << plan.status();
      std::vector<PlanCounts> counts;
      EXPECT_TRUE(checker.Check(batch, *plan, &counts).ok());
    }
    EXPECT_TRUE(checker.CheckFinal().ok());
    EXPECT_EQ((*planner)->profiler()->k(), top_k);
  }
}

TEST(HeraldAdaptiveTest, NeedsATopKOrABudget) {
  auto none = Planner::Create(AdaptiveOptionsFor("herald-adaptive", 0));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("top_k > 0 or budget_ms > 0"), std::string::npos);
  PlannerOptions o = AdaptiveOptionsFor("herald-adaptive", 1);
  o.adaptive.sketch_width = 1000;
  EXPECT_NE(Planner::Create(o).status().message().find("power of two"), std::string::npos);
}

}  // namespace
}  // namespace herald::scheduler
