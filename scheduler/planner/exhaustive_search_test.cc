#include "scheduler/planner/exhaustive_search.h"

#include "gtest/gtest.h"
#include "scheduler/planner/plan_replay.h"
#include "scheduler/planner/tiny_instance.h"

namespace herald::scheduler {
namespace {

// One table; batch b gives sample s the key keys[b][s].
std::vector<data::KeyBatch> OneTable(const std::vector<std::vector<Key>>& keys) {
  std::vector<data::KeyBatch> batches;
  for (const auto& batch_keys : keys) {
    data::KeyBatch b;
    b.num_samples = static_cast<uint32_t>(batch_keys.size());
    b.labels.assign(b.num_samples, 0.0f);
    b.tables.resize(1);
    for (Key k : batch_keys) {
      b.tables[0].keys.push_back(k);
      b.tables[0].offsets.push_back(static_cast<uint32_t>(b.tables[0].keys.size()));
    }
    batches.push_back(std::move(b));
  }
  return batches;
}

ExhaustiveOptions Options(const std::string& policy, uint32_t workers, uint32_t tables,
                          uint32_t capacity) {
  ExhaustiveOptions o;
  o.planner.policy = *PolicyByName(policy);
  o.planner.num_workers = workers;
  o.planner.capacity.assign(tables, capacity);
  o.planner.slots.assign(tables, capacity + 1);
  return o;
}

// Replays `allocation` through a planner and the PlanReplay; returns the
// transmissions the checker counted.
uint64_t ReplayChecked(const PlannerOptions& options, const std::vector<data::KeyBatch>& batches,
                       const std::vector<std::vector<uint32_t>>& allocation) {
  auto planner = Planner::Create(options);
  EXPECT_TRUE(planner.ok());
  for (const auto& worker_of : allocation) (*planner)->ForceAllocation(worker_of);
  PlanReplay checker(options.num_workers, options.slots);
  uint64_t total = 0;
  for (size_t b = 0; b < batches.size(); ++b) {
    auto plan = (*planner)->Plan(batches[b], b + 1 < batches.size() ? &batches[b + 1] : nullptr);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return 0;
    for (uint32_t s = 0; s < batches[b].num_samples; ++s) {
      uint32_t found = options.num_workers;
      for (uint32_t w = 0; w < options.num_workers; ++w) {
        for (uint32_t x : plan->workers[w].samples) {
          if (x == s) found = w;
        }
      }
      EXPECT_EQ(found, allocation[b][s]) << "the forced allocation was not followed";
    }
    std::vector<PlanCounts> counts;
    const absl::Status checked = checker.Check(batches[b], *plan, &counts);
    EXPECT_TRUE(checked.ok()) << checked;
    for (const PlanCounts& c : counts) total += c.fetched + c.pushed + c.written_back;
  }
  EXPECT_TRUE(checker.CheckFinal().ok());
  return total;
}

TEST(ExhaustiveSearchTest, KeepsEachRowWithOneWorker) {
  // Keys 1 and 2 twice: the optimum trains each on one worker both times:
  // 2 fetches + 2 final write-backs. Swapping them at batch 1 costs 2 more
  // fetches and 2 communication-plan write-backs.
  const auto batches = OneTable({{1, 2}, {2, 1}});
  auto result = SearchOptimalAllocation(Options("herald", 2, 1, 4), batches);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->optimum, 4u);
  ASSERT_EQ(result->allocation.size(), 2u);
  EXPECT_EQ(result->allocation[0], (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(result->allocation[1], (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(ReplayChecked(Options("herald", 2, 1, 4).planner, batches, {{0, 1}, {0, 1}}), 8u);
}

TEST(ExhaustiveSearchTest, VanillaSyncCostsTheSameWhateverTheAllocationWithoutCacheReuse) {
  // Every key appears once: every allocation fetches 4 rows and pushes 4.
  const auto batches = OneTable({{1, 2}, {3, 4}});
  auto result = SearchOptimalAllocation(Options("vanilla", 2, 1, 4), batches);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->optimum, 8u);
  EXPECT_EQ(result->heuristic, 8u);
}

TEST(ExhaustiveSearchTest, PruningFindsTheSameOptimumAsVisitingEveryLeaf) {
  uint64_t pruned_plans = 0, full_plans = 0;
  for (TinyKind kind : {TinyKind::kIndependent, TinyKind::kEntity}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      TinyInstanceOptions t;
      t.kind = kind;
      t.workers = 3;
      t.batches = 4;
      t.seed = seed;
      const auto batches = MakeTinyInstance(t);
      ExhaustiveOptions o = Options("herald", 3, t.tables, 2);
      auto pruned = SearchOptimalAllocation(o, batches);
      o.prune = false;
      auto full = SearchOptimalAllocation(o, batches);
      ASSERT_TRUE(pruned.ok()) << pruned.status();
      ASSERT_TRUE(full.ok()) << full.status();
      EXPECT_EQ(pruned->optimum, full->optimum) << "seed " << seed;
      EXPECT_EQ(full->plans, 6u + 36 + 216 + 216) << "every node of (3!)^3 leaves visited";
      pruned_plans += pruned->plans;
      full_plans += full->plans;
      EXPECT_LE(pruned->optimum, pruned->heuristic);
      // The optimum is a real, exact plan sequence with that cost.
      EXPECT_EQ(ReplayChecked(o.planner, batches, pruned->allocation), pruned->optimum);
    }
  }
  EXPECT_LT(pruned_plans, full_plans) << "the bound never cut a branch";
}

TEST(ExhaustiveSearchTest, TheOptimumIsNeverWorseThanAnyPolicysAllocation) {
  TinyInstanceOptions t;
  t.kind = TinyKind::kEntity;
  t.workers = 4;
  t.batches = 3;
  for (const char* policy : {"herald", "herald-comm-only", "vanilla", "herald-alloc-only"}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      t.seed = seed;
      const auto batches = MakeTinyInstance(t);
      auto result = SearchOptimalAllocation(Options(policy, 4, t.tables, 2), batches);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_LE(result->optimum, result->heuristic) << policy << " seed " << seed;
      EXPECT_GT(result->optimum, 0u);
    }
  }
}

TEST(ExhaustiveSearchTest, RefusesInstancesItCannotSearch) {
  TinyInstanceOptions t;
  t.workers = 9;
  auto too_many = SearchOptimalAllocation(Options("herald", 9, t.tables, 2), MakeTinyInstance(t));
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.status().message().find("9 workers"), std::string::npos);

  auto wrong_size = SearchOptimalAllocation(Options("herald", 2, 1, 2), OneTable({{1, 2, 3}}));
  EXPECT_EQ(wrong_size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_size.status().message().find("batch 0 has 3 samples"), std::string::npos);

  EXPECT_EQ(SearchOptimalAllocation(Options("herald", 2, 1, 2), {}).status().code(),
            absl::StatusCode::kInvalidArgument);

  t.workers = 4;
  t.batches = 6;
  ExhaustiveOptions o = Options("herald", 4, t.tables, 2);
  o.max_plans = 100;
  o.prune = false;
  auto budget = SearchOptimalAllocation(o, MakeTinyInstance(t));
  EXPECT_EQ(budget.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(budget.status().message().find("more than 100 plans"), std::string::npos);
}

TEST(PlannerCloneTest, ACloneContinuesExactlyLikeTheOriginal) {
  TinyInstanceOptions t;
  t.workers = 3;
  t.batches = 6;
  const auto batches = MakeTinyInstance(t);
  auto original = Planner::Create(Options("herald", 3, t.tables, 2).planner);
  ASSERT_TRUE(original.ok());
  for (size_t b = 0; b < 3; ++b) ASSERT_TRUE((*original)->Plan(batches[b], &batches[b + 1]).ok());
  std::unique_ptr<Planner> clone = (*original)->Clone();
  for (size_t b = 3; b < batches.size(); ++b) {
    const data::KeyBatch* next = b + 1 < batches.size() ? &batches[b + 1] : nullptr;
    auto a = (*original)->Plan(batches[b], next);
    auto c = clone->Plan(batches[b], next);
    ASSERT_TRUE(a.ok() && c.ok());
    for (uint32_t w = 0; w < 3; ++w) {
      EXPECT_EQ(a->workers[w].samples, c->workers[w].samples);
      EXPECT_EQ(a->workers[w].tables[0].fetch.slots, c->workers[w].tables[0].fetch.slots);
      EXPECT_EQ(a->workers[w].tables[0].evict.slots, c->workers[w].tables[0].evict.slots);
      EXPECT_EQ(a->workers[w].slots[1].slots, c->workers[w].slots[1].slots);
    }
  }
}

TEST(PlannerForceAllocationTest, ABadForcedAllocationIsRefused) {
  auto planner = Planner::Create(Options("herald", 2, 1, 2).planner);
  ASSERT_TRUE(planner.ok());
  (*planner)->ForceAllocation({0, 2});
  auto plan = (*planner)->Plan(OneTable({{1, 2}})[0], nullptr);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("sample 1 to worker 2"), std::string::npos);
}

}  // namespace
}  // namespace herald::scheduler
