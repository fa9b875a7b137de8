#include "scheduler/planner/planner.h"

#include <algorithm>
#include <map>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scheduler/planner/plan_replay.h"

namespace herald::scheduler {
namespace {

// samples[s][t]: the keys of sample s in table t.
data::KeyBatch MakeBatch(const std::vector<std::vector<std::vector<Key>>>& samples) {
  data::KeyBatch b;
  b.num_samples = static_cast<uint32_t>(samples.size());
  b.tables.resize(samples.empty() ? 0 : samples[0].size());
  for (const auto& sample : samples) {
    b.labels.push_back(0.0f);
    for (size_t t = 0; t < sample.size(); ++t) {
      b.tables[t].keys.insert(b.tables[t].keys.end(), sample[t].begin(), sample[t].end());
      b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
    }
  }
  return b;
}

data::KeyBatch OneTable(const std::vector<Key>& keys) {
  std::vector<std::vector<std::vector<Key>>> samples;
  for (Key k : keys) samples.push_back({{k}});
  return MakeBatch(samples);
}

PlannerOptions Options(const std::string& policy, uint32_t workers, uint32_t tables,
                       uint32_t capacity, uint32_t slots) {
  PlannerOptions o;
  o.policy = *PolicyByName(policy);
  o.num_workers = workers;
  o.capacity.assign(tables, capacity);
  o.slots.assign(tables, slots);
  return o;
}

PlanCounts Sum(const std::vector<PlanCounts>& per_worker) {
  PlanCounts s;
  for (const PlanCounts& c : per_worker) s += c;
  return s;
}

// Plans every batch, replays each plan through the checker, and checks the
// planner's own counts against the checker's. Returns per-iteration totals.
// `forced`: allocations given to the first batches instead of the policy's.
std::vector<PlanCounts> RunChecked(const PlannerOptions& options,
                                   const std::vector<data::KeyBatch>& batches,
                                   std::vector<IterationPlan>* plans = nullptr,
                                   const std::vector<std::vector<uint32_t>>& forced = {}) {
  auto planner = Planner::Create(options);
  EXPECT_TRUE(planner.ok()) << planner.status();
  if (!planner.ok()) return {};
  for (const std::vector<uint32_t>& worker_of : forced) (*planner)->ForceAllocation(worker_of);
  PlanReplay checker(options.num_workers, options.slots);
  std::vector<PlanCounts> totals;
  for (size_t i = 0; i < batches.size(); ++i) {
    const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
    auto plan = (*planner)->Plan(batches[i], next);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return totals;
    std::vector<PlanCounts> counts;
    const absl::Status checked = checker.Check(batches[i], *plan, &counts);
    EXPECT_TRUE(checked.ok()) << options.policy.name << ": " << checked;
    if (!checked.ok()) return totals;
    for (uint32_t w = 0; w < options.num_workers; ++w) {
      const PlanCounts& a = plan->workers[w].counts;
      const PlanCounts& b = counts[w];
      EXPECT_EQ(a.uses, b.uses);
      EXPECT_EQ(a.hits, b.hits);
      EXPECT_EQ(a.fetched, b.fetched);
      EXPECT_EQ(a.pushed, b.pushed);
      EXPECT_EQ(a.written_back, b.written_back) << "iteration " << i << " worker " << w;
      EXPECT_EQ(a.transferred, b.transferred) << "iteration " << i << " worker " << w;
      EXPECT_EQ(a.served_copies, b.served_copies) << "iteration " << i << " worker " << w;
      EXPECT_EQ(a.owner_gradients, b.owner_gradients) << "iteration " << i << " worker " << w;
      EXPECT_EQ(a.initialized, b.initialized) << "iteration " << i << " worker " << w;
    }
    totals.push_back(Sum(counts));
    if (plans != nullptr) plans->push_back(*std::move(plan));
    if (FlushesAt(options.flush_every, i)) {  // a consistent point: the PS has the model
      const absl::Status flushed = checker.CheckFinal();
      EXPECT_TRUE(flushed.ok()) << "after flush iteration " << i << ": " << flushed;
    }
  }
  const absl::Status final_check = checker.CheckFinal();
  EXPECT_TRUE(final_check.ok()) << final_check;
  return totals;
}

TEST(PlannerTest, NocacheFetchesAndPushesEveryRowEveryIteration) {
  const std::vector<data::KeyBatch> batches = {OneTable({1, 2, 1, 3}), OneTable({1, 2, 1, 3})};
  const auto totals = RunChecked(Options("nocache", 2, 1, 8, 8), batches);
  ASSERT_EQ(totals.size(), 2u);
  for (const PlanCounts& c : totals) {
    EXPECT_EQ(c.fetched, c.uses);
    EXPECT_EQ(c.pushed, c.uses);
    EXPECT_EQ(c.hits, 0u);
    EXPECT_EQ(c.written_back, 0u);
  }
}

TEST(PlannerTest, VanillaPushesEveryTrainedRowAndRefetchesChangedOnes) {
  // One worker: everything it trains changes, so every reuse is a refetch.
  const std::vector<data::KeyBatch> batches = {OneTable({1, 2}), OneTable({1, 2}),
                                               OneTable({1, 2})};
  const auto totals = RunChecked(Options("vanilla", 1, 1, 8, 8), batches);
  ASSERT_EQ(totals.size(), 3u);
  for (const PlanCounts& c : totals) {
    EXPECT_EQ(c.uses, 2u);
    EXPECT_EQ(c.pushed, 2u);
    EXPECT_EQ(c.fetched, 2u);
    EXPECT_EQ(c.written_back, 0u);
  }
}

TEST(PlannerTest, HeraldKeepsRowsWithTheirTrainerAndFollowsThemWithItsSamples) {
  // Iteration 0: keys 10 and 20 on different workers (one sample each).
  // Iteration 1: the same keys in swapped sample order: location-aware
  // allocation must send each to the worker that owns it, so nothing moves.
  const std::vector<data::KeyBatch> batches = {OneTable({10, 20}), OneTable({20, 10}),
                                               OneTable({10, 20})};
  std::vector<IterationPlan> plans;
  const auto totals = RunChecked(Options("herald", 2, 1, 8, 8), batches, &plans);
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_EQ(totals[0].fetched, 2u);
  EXPECT_EQ(totals[0].pushed, 0u);
  EXPECT_EQ(totals[1].fetched, 0u);
  EXPECT_EQ(totals[1].pushed, 0u);
  EXPECT_EQ(totals[1].written_back, 0u);
  EXPECT_EQ(totals[1].hits, 2u);
  EXPECT_EQ(totals[2].written_back, 2u);  // the final flush
  // Sample 0 of iteration 1 (key 20) goes where sample 1 of iteration 0 went.
  auto worker_of = [&](size_t it, uint32_t s) {
    for (uint32_t w = 0; w < 2; ++w) {
      const auto& ss = plans[it].workers[w].samples;
      if (std::find(ss.begin(), ss.end(), s) != ss.end()) return w;
    }
    return 99u;
  };
  EXPECT_EQ(worker_of(1, 0), worker_of(0, 1));
  EXPECT_EQ(worker_of(1, 1), worker_of(0, 0));
}

TEST(PlannerTest, CommunicationPlanWritesBackExactlyTheRowsOthersTrainNext) {
  // Iteration 0: key 7 on one worker, key 8 on the other (owned, dirty).
  // Iteration 1: both samples hold key 7, so it is shared: its owner writes
  // it back after iteration 0; key 8 is not used again and stays dirty.
  const std::vector<data::KeyBatch> batches = {
      MakeBatch({{{7}}, {{8}}}),
      MakeBatch({{{7}}, {{7}}}),
      MakeBatch({{{9}}, {{9}}}),
  };
  std::vector<IterationPlan> plans;
  const auto totals = RunChecked(Options("herald", 2, 1, 8, 8), batches, &plans);
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_EQ(totals[0].written_back, 1u);
  size_t writebacks_of_7 = 0;
  for (const WorkerPlan& wp : plans[0].workers) {
    for (Key k : wp.tables[0].writeback.keys) writebacks_of_7 += k == 7;
  }
  EXPECT_EQ(writebacks_of_7, 1u);
  EXPECT_EQ(totals[1].pushed, 2u);   // key 7 by both workers
  EXPECT_EQ(totals[1].fetched, 1u);  // the worker without key 7 fetches it
  // Last iteration: key 9 shared (2 pushes); key 8 still dirty: flushed.
  EXPECT_EQ(totals[2].written_back, 1u);
}

TEST(PlannerTest, WriteBacksToTheOneOtherNextTrainerAreCountedAsHandOffs) {
  // Iteration 0: worker 0 trains key 7, worker 1 key 8 (owned, dirty).
  // Iteration 1, forced allocation: the keys change hands (two hand-offs);
  // in the second scenario both workers train key 7 (a shared row: its
  // write-back is no hand-off, and key 8 is not used: no write-back).
  struct Scenario {
    data::KeyBatch next;
    uint64_t handoffs, written_back;
  };
  for (const Scenario& sc :
       {Scenario{MakeBatch({{{8}}, {{7}}}), 2, 2}, Scenario{MakeBatch({{{7}}, {{7}}}), 0, 1}}) {
    const data::KeyBatch first = MakeBatch({{{7}}, {{8}}});
    auto planner = *Planner::Create(Options("herald", 2, 1, 8, 8));
    planner->ForceAllocation({0, 1});
    planner->ForceAllocation({0, 1});
    PlanReplay checker(2, {8});
    std::vector<PlanCounts> counts;
    auto plan = planner->Plan(first, &sc.next);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(checker.Check(first, *plan, &counts).ok());
    uint64_t handoffs = 0, written_back = 0;
    for (const WorkerPlan& wp : plan->workers) {
      handoffs += wp.counts.handoffs;
      written_back += wp.counts.written_back;
    }
    EXPECT_EQ(handoffs, sc.handoffs);
    EXPECT_EQ(written_back, sc.written_back);
  }
}

// With hand-offs, the same swap moves each key once:
// sent after iteration 0 by its owner, received by the other worker in
// iteration 1's fetch phase as its dirty copy; no write-back, no fetch, and
// the last plan flushes both from their new owners.
TEST(PlannerTest, HandOffsMoveARowOnceToTheOneOtherNextTrainer) {
  const std::vector<data::KeyBatch> batches = {MakeBatch({{{7}}, {{8}}}),
                                               MakeBatch({{{8}}, {{7}}})};
  PlannerOptions o = Options("herald", 2, 1, 8, 8);
  o.handoff = true;
  std::vector<IterationPlan> plans;
  RunChecked(o, batches, &plans, {{0, 1}, {0, 1}});
  ASSERT_EQ(plans.size(), batches.size());
  for (uint32_t w = 0; w < 2; ++w) {
    const plan::TablePlan& sent = plans[0].workers[w].tables[0];
    ASSERT_EQ(sent.send.keys.size(), 1u) << w;
    EXPECT_EQ(sent.send.keys[0], w == 0 ? 7u : 8u);
    EXPECT_EQ(sent.send.peers[0], 1 - w);
    ASSERT_EQ(sent.incoming.keys.size(), 1u);  // and what it gets from the other
    EXPECT_EQ(sent.incoming.keys[0], w == 0 ? 8u : 7u);
    EXPECT_EQ(sent.incoming.peers[0], 1 - w);
    EXPECT_EQ(plans[0].workers[w].counts.transferred, 1u);
    EXPECT_TRUE(plans[0].workers[w].tables[0].writeback.keys.empty());
    const plan::TablePlan& received = plans[1].workers[w].tables[0];
    ASSERT_EQ(received.receive.keys.size(), 1u) << w;
    EXPECT_EQ(received.receive.keys[0], w == 0 ? 8u : 7u);
    EXPECT_TRUE(plans[1].workers[w].tables[0].fetch.keys.empty());
    ASSERT_EQ(plans[1].workers[w].tables[0].writeback.keys.size(), 1u);  // the final flush
    EXPECT_EQ(plans[1].workers[w].tables[0].writeback.keys[0], w == 0 ? 8u : 7u);
  }
}

// Row expiry: a batch's expired rows leave every cache first, unwritten
// (dirty or not), each goes to exactly one worker's expire list, and the
// key's next fetch waits for the commit that deletes it. The plan checker
// refuses a plan that keeps an expired row cached.
TEST(PlannerTest, ExpiredRowsAreDroppedUnwrittenAndFetchedAgainLate) {
  std::vector<data::KeyBatch> batches = {OneTable({10, 20}), OneTable({10, 30}), OneTable({10, 30}),
                                         OneTable({20, 10})};
  batches[2].tables[0].expired = {20};  // absent from batches 1 and 2
  std::vector<IterationPlan> plans;
  const auto totals = RunChecked(Options("herald", 2, 1, 8, 8), batches, &plans);
  ASSERT_EQ(totals.size(), 4u);
  size_t dropped = 0, expired = 0;
  for (const WorkerPlan& wp : plans[2].workers) {
    const plan::TablePlan& tp = wp.tables[0];
    dropped += tp.drop.keys.size();
    for (Key k : tp.drop.keys) EXPECT_EQ(k, 20u);
    expired += tp.expire.keys.size();
    for (Key k : tp.writeback.keys) EXPECT_NE(k, 20u);
    for (Key k : tp.evict.keys) EXPECT_NE(k, 20u);
  }
  EXPECT_EQ(dropped, 1u) << "the one worker holding 20 drops it";
  EXPECT_EQ(expired, 1u);
  bool fetched_again = false;
  for (const WorkerPlan& wp : plans[3].workers) {
    const plan::FetchRows& f = wp.tables[0].fetch;
    for (size_t i = 0; i < f.keys.size(); ++i) {
      if (f.keys[i] != 20) continue;
      fetched_again = true;
      EXPECT_EQ(f.early[i], 0) << "the fetch waits for the commit that deletes the row";
    }
  }
  EXPECT_TRUE(fetched_again);

  // The same plans with the drop left out: the checker refuses them.
  PlanReplay checker(2, {8});
  std::vector<PlanCounts> counts;
  for (size_t i = 0; i < 2; ++i) ASSERT_TRUE(checker.Check(batches[i], plans[i], &counts).ok());
  IterationPlan kept = plans[2];
  for (WorkerPlan& wp : kept.workers) wp.tables[0].drop = {};
  const absl::Status refused = checker.Check(batches[2], kept, &counts);
  EXPECT_NE(refused.message().find("expired key 20 is still cached"), std::string::npos) << refused;
}

TEST(PlannerTest, LruEvictsTheLeastRecentlyUsedRowAndWritesItBackWhenDirty) {
  // One worker, capacity 2: keys 1, 2, then 3 evicts 1 (dirty: written back).
  const std::vector<data::KeyBatch> batches = {OneTable({1}), OneTable({2}), OneTable({3}),
                                               OneTable({2})};
  std::vector<IterationPlan> plans;
  const auto totals = RunChecked(Options("herald", 1, 1, 2, 4), batches, &plans);
  ASSERT_EQ(totals.size(), 4u);
  ASSERT_EQ(plans[2].workers[0].tables[0].evict.keys.size(), 1u);
  EXPECT_EQ(plans[2].workers[0].tables[0].evict.keys[0], 1u);
  EXPECT_EQ(totals[2].written_back, 1u);
  EXPECT_EQ(totals[3].hits, 1u);  // key 2 stayed, dirty, owned by the only worker
  EXPECT_EQ(totals[3].fetched, 0u);
}

TEST(PlannerTest, LruEvictsACleanCopyBeforeAnOlderDirtyRow) {
  // Two workers, capacity 2, samples given to workers 0 and 1 in turn.
  // Worker 0 trains key 2 (dirty, its own), then key 1, which worker 1
  // trains next (so worker 0 writes key 1 back: its copy is clean). For
  // key 7 worker 0 must evict: key 1 (clean, no write-back), not the less
  // recently used key 2, which it then trains again from its cache.
  const std::vector<data::KeyBatch> batches = {OneTable({2, 50}), OneTable({1, 51}),
                                               OneTable({7, 1}), OneTable({2, 60})};
  const std::vector<std::vector<uint32_t>> forced(batches.size(), {0, 1});
  std::vector<IterationPlan> plans;
  RunChecked(Options("herald", 2, 1, 2, 4), batches, &plans, forced);
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(plans[1].workers[0].tables[0].writeback.keys, (std::vector<Key>{1}));
  EXPECT_EQ(plans[2].workers[0].tables[0].evict.keys, (std::vector<Key>{1}));
  EXPECT_EQ(plans[2].workers[0].counts.written_back, 0u);
  EXPECT_EQ(plans[3].workers[0].counts.hits, 1u);  // key 2 stayed, dirty
  EXPECT_EQ(plans[3].workers[0].counts.fetched, 0u);
}

TEST(PlannerTest, LfuKeepsTheMostUsedRow) {
  // Key 1 used three times, key 2 once; key 3 must evict key 2 under LFU.
  const std::vector<data::KeyBatch> batches = {OneTable({1}), OneTable({1}), OneTable({2}),
                                               OneTable({1}), OneTable({3})};
  PlannerOptions o = Options("vanilla", 1, 1, 2, 4);
  o.eviction = EvictionKind::kLfu;
  std::vector<IterationPlan> plans;
  RunChecked(o, batches, &plans);
  ASSERT_EQ(plans.size(), 5u);
  ASSERT_EQ(plans[4].workers[0].tables[0].evict.keys.size(), 1u);
  EXPECT_EQ(plans[4].workers[0].tables[0].evict.keys[0], 2u);
}

TEST(PlannerTest, RowsOfOneIterationThatDoNotFitTheSlotsAreResourceExhausted) {
  auto planner = Planner::Create(Options("herald", 1, 1, 2, 2));
  ASSERT_TRUE(planner.ok());
  auto plan = (*planner)->Plan(OneTable({1, 2, 3}), nullptr);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(plan.status().message().find("3 rows of table 0"), std::string::npos) << plan.status();
}

// A batch rejected for its shape changes nothing: the planner plans the
// next one. An error once the planner's state has changed stops it: every
// later call fails with FailedPrecondition quoting the error, rather than
// planning from half-updated caches.
TEST(PlannerTest, AnErrorAfterPlanningBeganStopsThePlanner) {
  auto planner = Planner::Create(Options("herald", 1, 1, 2, 2));
  ASSERT_TRUE(planner.ok());
  data::KeyBatch two_tables = OneTable({1});
  two_tables.tables.push_back(two_tables.tables[0]);
  EXPECT_EQ((*planner)->Plan(two_tables, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto plan = (*planner)->Plan(OneTable({1, 2}), nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->workers[0].tables[0].fetch.keys, (std::vector<Key>{1, 2}));

  EXPECT_EQ((*planner)->Plan(OneTable({1, 2, 3}), nullptr).status().code(),
            absl::StatusCode::kResourceExhausted);
  plan = (*planner)->Plan(OneTable({1}), nullptr);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find("3 rows of table 0"), std::string::npos) << plan.status();
}

TEST(PlannerTest, BadOptionsAndBatchesAreRejectedByName) {
  PlannerOptions o = Options("herald", 0, 1, 2, 2);
  EXPECT_NE(Planner::Create(o).status().message().find("num_workers"), std::string::npos);
  o = Options("herald", 2, 2, 4, 2);
  EXPECT_NE(Planner::Create(o).status().message().find("slots[0]"), std::string::npos);
  o = Options("herald", 2, 2, 4, uint32_t{1} << 28);
  EXPECT_NE(Planner::Create(o).status().message().find("slots[0]: 268435456, want < 268435456"),
            std::string::npos)
      << Planner::Create(o).status();
  o = Options("herald", 2, 2, 4, 4);
  for (uint32_t passes : {0u, kMaxAllocationPasses + 1}) {
    o.allocation_passes = passes;
    EXPECT_NE(Planner::Create(o).status().message().find(
                  absl::StrCat("allocation_passes: ", passes, ", want 1..8")),
              std::string::npos)
        << Planner::Create(o).status();
  }
  auto planner = Planner::Create(Options("herald", 2, 2, 4, 4));
  ASSERT_TRUE(planner.ok());
  EXPECT_NE((*planner)->Plan(OneTable({1, 2}), nullptr).status().message().find("1 tables"),
            std::string::npos);
  EXPECT_EQ(PolicyByName("fastest").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PlannerTest, FetchesCarryHowManyIterationsLeftTheirRowsUnchanged) {
  // One vanilla worker (every fetched row is trained and pushed): key 1
  // fetched at 0 (nothing planned before: 0) and at 1 (pushed at 0: 0),
  // key 5 first at 2 (nothing changed it: the two iterations planned), key
  // 1 at 3 (pushed at 1: one), key 9 at 4 (never: at most
  // kMaxEarlyDistance), key 5 at 5 (pushed at 2: two).
  const std::vector<data::KeyBatch> batches = {OneTable({1}), OneTable({1}), OneTable({5}),
                                               OneTable({1}), OneTable({9}), OneTable({5})};
  std::vector<IterationPlan> plans;
  RunChecked(Options("vanilla", 1, 1, 4, 4), batches, &plans);
  ASSERT_EQ(plans.size(), 6u);
  const std::vector<uint8_t> expected = {0, 0, 2, 1, kMaxEarlyDistance, 2};
  for (size_t i = 0; i < plans.size(); ++i) {
    EXPECT_EQ(plans[i].workers[0].tables[0].fetch.early, std::vector<uint8_t>{expected[i]})
        << "iteration " << i;
  }

  // The checker refuses a distance that reaches an iteration that changed
  // the row (key 1 at 1 marked 1; key 5 at 5 marked 3), and one beyond the
  // most.
  auto refused = [&](size_t iteration, uint8_t distance) {
    const PlannerOptions o = Options("vanilla", 1, 1, 4, 4);
    auto planner = *Planner::Create(o);
    PlanReplay checker(1, o.slots);
    std::vector<PlanCounts> counts;
    for (size_t i = 0; i <= iteration; ++i) {
      IterationPlan p =
          *planner->Plan(batches[i], i + 1 < batches.size() ? &batches[i + 1] : nullptr);
      if (i == iteration) p.workers[0].tables[0].fetch.early = {distance};
      const absl::Status s = checker.Check(batches[i], p, &counts);
      if (i < iteration) {
        EXPECT_TRUE(s.ok()) << s;
      } else {
        return std::string(s.message());
      }
    }
    return std::string();
  };
  EXPECT_NE(refused(1, 1).find("marked early at distance 1, but iteration 0 changed its PS copy"),
            std::string::npos)
      << refused(1, 1);
  EXPECT_NE(refused(5, 3).find("marked early at distance 3, but iteration 2 changed its PS copy"),
            std::string::npos)
      << refused(5, 3);
  EXPECT_NE(refused(4, 4).find("at most 3"), std::string::npos) << refused(4, 4);
  EXPECT_EQ(refused(5, 2), "");
}

// Property test: random multi-hot batches over small skewed key spaces, every
// policy, LRU and LFU, 1-5 workers (and 70 and 130: the allocator's two- and
// four-word worker sets), tight caches. The checker must accept every plan
// and count what the planner counted.
// Key 7: trained by worker 0 alone, then by both: 0 keeps it, serves 1 a
// copy and gathers its gradient. Key 9: trained by both while the PS holds
// it: the owner its key picks (worker 0) gathers. Nothing goes to the PS but
// the final flush.
TEST(PlannerTest, ServedRowsStayWithTheirOwnerWhichGathersEveryGradient) {
  WorkerSet both;
  both.Add(0);
  both.Add(1);
  ASSERT_EQ(Planner::PickOwner(both, 9), 0u);
  const std::vector<data::KeyBatch> batches = {MakeBatch({{{7, 9}}, {{9}}}),
                                               MakeBatch({{{7}}, {{7}}})};
  PlannerOptions o = Options("herald", 2, 1, 8, 8);
  o.serve = true;
  std::vector<IterationPlan> plans;
  RunChecked(o, batches, &plans, {{0, 1}, {0, 1}});
  ASSERT_EQ(plans.size(), batches.size());
  const plan::TablePlan& w0 = plans[0].workers[0].tables[0];
  const plan::TablePlan& w1 = plans[0].workers[1].tables[0];
  EXPECT_EQ(w0.fetch.keys, (std::vector<Key>{7, 9}));
  EXPECT_EQ(w0.owned_slots.size(), 2u);
  EXPECT_EQ(w0.gather.keys, std::vector<Key>{9});
  EXPECT_EQ(w0.gather.peers, std::vector<uint32_t>{1});
  EXPECT_EQ(w1.fetch.keys, std::vector<Key>{9});
  EXPECT_EQ(w1.remote.keys, std::vector<Key>{9});
  EXPECT_EQ(w1.remote.peers, std::vector<uint32_t>{0});
  EXPECT_EQ(w0.send.keys, std::vector<Key>{7});  // 7's copy for worker 1's next step
  EXPECT_EQ(w0.send.peers, std::vector<uint32_t>{1});
  EXPECT_EQ(w0.send.served, std::vector<uint8_t>{1});
  EXPECT_EQ(w1.incoming.keys, std::vector<Key>{7});
  EXPECT_EQ(w1.incoming.served, std::vector<uint8_t>{1});
  const plan::TablePlan& n0 = plans[1].workers[0].tables[0];
  const plan::TablePlan& n1 = plans[1].workers[1].tables[0];
  EXPECT_EQ(n1.receive.keys, std::vector<Key>{7});
  EXPECT_EQ(n1.receive.served, std::vector<uint8_t>{1});
  EXPECT_TRUE(n1.fetch.keys.empty());
  EXPECT_EQ(n1.remote.keys, std::vector<Key>{7});
  EXPECT_EQ(n0.gather.keys, std::vector<Key>{7});
  EXPECT_EQ(n0.writeback.keys.size(), 2u);  // the final flush: 7 and 9, both worker 0's
  for (const IterationPlan& plan : plans) {
    for (const WorkerPlan& wp : plan.workers) {
      EXPECT_EQ(wp.counts.pushed, 0u);
      EXPECT_TRUE(wp.tables[0].push.slots.empty());
    }
  }
  EXPECT_EQ(plans[0].workers[0].counts.served_copies, 1u);
  EXPECT_EQ(plans[0].workers[1].counts.owner_gradients, 1u);
  EXPECT_EQ(plans[1].workers[1].counts.owner_gradients, 1u);
}

// Rows never trained are initialised by the workers, whatever the policy;
// once trained they are fetched like any other.
TEST(PlannerTest, RowsNeverTrainedAreInitialisedByTheWorkers) {
  const std::vector<data::KeyBatch> batches = {OneTable({1, 2}), OneTable({1, 3}),
                                               OneTable({3, 4})};
  PlannerOptions o = Options("nocache", 2, 1, 4, 8);
  o.init_on_worker = true;
  std::vector<IterationPlan> plans;
  RunChecked(o, batches, &plans, {{0, 1}, {0, 1}, {0, 1}});
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].workers[0].tables[0].init.keys, std::vector<Key>{1});
  EXPECT_EQ(plans[0].workers[1].tables[0].init.keys, std::vector<Key>{2});
  EXPECT_TRUE(plans[0].workers[0].tables[0].fetch.keys.empty());
  EXPECT_EQ(plans[1].workers[0].tables[0].fetch.keys, std::vector<Key>{1});  // trained at 0
  EXPECT_EQ(plans[1].workers[1].tables[0].init.keys, std::vector<Key>{3});
  EXPECT_EQ(plans[2].workers[0].tables[0].fetch.keys, std::vector<Key>{3});
  EXPECT_EQ(plans[2].workers[1].tables[0].init.keys, std::vector<Key>{4});
  EXPECT_EQ(plans[0].workers[0].counts.initialized, 1u);
  EXPECT_EQ(plans[0].workers[0].counts.fetched, 0u);
  o.trained_filter_bits = 100;
  EXPECT_NE(Planner::Create(o).status().message().find("trained_filter_bits: 100, want a power"),
            std::string::npos);
}

// Owners of rows the PS holds are spread over the trainers by key, not
// always the lowest rank.
TEST(PlannerTest, PickedOwnersSpreadOverTheTrainers) {
  WorkerSet users;
  for (uint32_t w : {1u, 3u, 4u, 6u, 9u, 70u, 130u, 200u}) users.Add(w);
  std::map<uint32_t, int> owned;
  for (Key key = 0; key < 8000; ++key) {
    const uint32_t owner = Planner::PickOwner(users, key);
    ASSERT_TRUE(users.Has(owner)) << owner;
    ++owned[owner];
  }
  EXPECT_EQ(owned.size(), 8u);
  for (const auto& [w, n] : owned) {
    EXPECT_GT(n, 850) << w;
    EXPECT_LT(n, 1150) << w;
  }
}

TEST(PlannerPropertyTest, RandomBatchesGiveValidPlansUnderEveryPolicy) {
  std::mt19937_64 rng(42);
  for (const std::string& policy : PolicyNames()) {
    for (uint32_t workers : {1u, 2u, 3u, 5u, 70u, 130u}) {
      for (EvictionKind eviction : {EvictionKind::kLru, EvictionKind::kLfu}) {
        const uint32_t tables = 3, batch = 4 * workers + 3, max_hot = 3;
        std::vector<data::KeyBatch> batches;
        for (int it = 0; it < 12; ++it) {
          std::vector<std::vector<std::vector<Key>>> samples(batch);
          for (auto& sample : samples) {
            sample.resize(tables);
            for (uint32_t t = 0; t < tables; ++t) {
              const uint64_t space = 4 + 20 * t;
              const uint32_t hot = static_cast<uint32_t>(rng() % (max_hot + 1));  // 0: missing
              for (uint32_t h = 0; h < hot; ++h) {
                const uint64_t r = rng() % space;
                sample[t].push_back((r * r) / space);  // skewed towards small keys
              }
            }
          }
          batches.push_back(MakeBatch(samples));
        }
        PlannerOptions o = Options(policy, workers, tables, 6, batch * max_hot + 6);
        o.eviction = eviction;
        o.seed = rng();
        o.threads = 1 + workers % 3;  // tables on 1-3 threads
        o.adaptive.top_k = 2;         // herald-adaptive: 2 of the 3 tables scored
        o.adaptive.profile_every = 3;
        if (policy != "nocache" && eviction == EvictionKind::kLru) {
          o.warm_keys = {{0, 1, 2, 3}, {0, 1, 2, 3, 4, 5}, {5, 1, 3}};  // warm start
        }
        SCOPED_TRACE(policy + " workers=" + std::to_string(workers));
        const auto totals = RunChecked(o, batches);
        EXPECT_EQ(totals.size(), batches.size());
        if (o.policy.sync == SyncMode::kOwnership) {  // again with hand-offs
          o.handoff = true;
          const auto handed = RunChecked(o, batches);
          EXPECT_EQ(handed.size(), batches.size());
          o.serve = true;  // and with rows served by their owner
          const auto served = RunChecked(o, batches);
          EXPECT_EQ(served.size(), batches.size());
          o.handoff = false;
          const auto served_only = RunChecked(o, batches);
          EXPECT_EQ(served_only.size(), batches.size());
          o.serve = false;
        }
        {  // flushing every dirty row every 4 iterations, every option on
          PlannerOptions flushing = o;
          flushing.flush_every = {4};
          flushing.handoff = flushing.serve = flushing.policy.sync == SyncMode::kOwnership;
          const auto flushed = RunChecked(flushing, batches);
          EXPECT_EQ(flushed.size(), batches.size());
        }
        if (o.policy.allocation == Allocation::kLocality) {  // refining allocation passes
          PlannerOptions refined = o;
          refined.allocation_passes = 3;
          refined.handoff = refined.serve = refined.policy.sync == SyncMode::kOwnership;
          const auto passes = RunChecked(refined, batches);
          EXPECT_EQ(passes.size(), batches.size());
        }
        // Rows never trained initialised by the workers: the same plans
        // with each first fetch turned into an initialisation.
        PlannerOptions init = o;
        init.init_on_worker = true;
        init.trained_filter_bits = 64;  // false positives: fetched instead
        const auto inited = RunChecked(init, batches);
        ASSERT_EQ(inited.size(), totals.size());
        for (size_t i = 0; i < totals.size(); ++i) {
          EXPECT_EQ(inited[i].fetched + inited[i].initialized, totals[i].fetched) << i;
          EXPECT_EQ(inited[i].pushed, totals[i].pushed) << i;
        }
      }
    }
  }
}

// Memory independent of the dataset: 300 batches over a key space far larger
// than the caches (half the uses new keys, half 40 recurring ones) under
// every caching policy, reading two batches ahead. The directory never
// holds more than the caches' slots plus the three batches in flight plus
// the rows whose PS copy the last kMaxEarlyDistance plans changed (at
// most a batch's rows each),
// while the data's distinct keys grow to many times that.
TEST(PlannerMemoryTest, DirectoryStaysBoundedByCachesAndBatchesWhateverTheData) {
  const uint32_t workers = 4, tables = 2, batch = 64, capacity = 50, slots = 80;
  for (const char* policy : {"vanilla", "herald", "herald-comm-only"}) {
    auto planner = *Planner::Create(Options(policy, workers, tables, capacity, slots));
    std::mt19937_64 rng(5);
    absl::flat_hash_set<Key> distinct;
    auto make = [&](int it) {
      std::vector<std::vector<std::vector<Key>>> samples(batch);
      for (auto& sample : samples) {
        for (uint32_t t = 0; t < tables; ++t) {
          const Key key = rng() % 2 == 0 ? rng() % 40 : 1000 + uint64_t(it) * batch + rng() % batch;
          distinct.insert(key * tables + t);
          sample.push_back({key});
        }
      }
      return MakeBatch(samples);
    };
    // A third batch in flight when the planner reads two ahead.
    const size_t bound =
        size_t{workers} * tables * slots + (3 + kMaxEarlyDistance) * size_t{batch} * tables;
    data::KeyBatch current = make(0), next = make(1);
    IterationPlan plan;
    for (int it = 0; it < 300; ++it) {
      const data::KeyBatch after = make(it + 2);
      const absl::Status planned = planner->PlanInto(current, it + 1 < 300 ? &next : nullptr,
                                                     it + 2 < 300 ? &after : nullptr, &plan);
      ASSERT_TRUE(planned.ok()) << planned;
      ASSERT_LE(planner->directory_entries(), bound) << policy << " iteration " << it;
      current = next;
      next = after;
    }
    EXPECT_GT(distinct.size(), 10 * bound);
  }
}

TEST(PlannerTest, SamePlansForTheSameSeed) {
  const std::vector<data::KeyBatch> batches = {OneTable({1, 2, 3, 4, 1, 2}),
                                               OneTable({4, 3, 2, 1, 5, 6})};
  std::vector<IterationPlan> a, b;
  RunChecked(Options("herald", 3, 1, 4, 8), batches, &a);
  RunChecked(Options("herald", 3, 1, 4, 8), batches, &b);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t w = 0; w < 3; ++w) {
      EXPECT_EQ(a[i].workers[w].samples, b[i].workers[w].samples);
      EXPECT_EQ(a[i].workers[w].slots[0].slots, b[i].workers[w].slots[0].slots);
      EXPECT_EQ(a[i].workers[w].tables[0].fetch.keys, b[i].workers[w].tables[0].fetch.keys);
    }
  }
}

// Every field of two plans, table by table.
void ExpectSamePlan(const IterationPlan& a, const IterationPlan& b) {
  ASSERT_EQ(a.workers.size(), b.workers.size());
  for (size_t w = 0; w < a.workers.size(); ++w) {
    const WorkerPlan& x = a.workers[w];
    const WorkerPlan& y = b.workers[w];
    SCOPED_TRACE("iteration " + std::to_string(a.iteration) + " worker " + std::to_string(w));
    EXPECT_EQ(x.samples, y.samples);
    EXPECT_EQ(x.counts.fetched, y.counts.fetched);
    EXPECT_EQ(x.counts.pushed, y.counts.pushed);
    EXPECT_EQ(x.counts.written_back, y.counts.written_back);
    EXPECT_EQ(x.counts.hits, y.counts.hits);
    ASSERT_EQ(x.tables.size(), y.tables.size());
    for (size_t t = 0; t < x.tables.size(); ++t) {
      const plan::TablePlan& p = x.tables[t];
      const plan::TablePlan& q = y.tables[t];
      EXPECT_EQ(p.evict.slots, q.evict.slots);
      EXPECT_EQ(p.evict.keys, q.evict.keys);
      EXPECT_EQ(p.fetch.keys, q.fetch.keys);
      EXPECT_EQ(p.fetch.slots, q.fetch.slots);
      EXPECT_EQ(p.fetch.early, q.fetch.early);
      EXPECT_EQ(p.owned_slots, q.owned_slots);
      EXPECT_EQ(p.push.slots, q.push.slots);
      EXPECT_EQ(p.push.keys, q.push.keys);
      EXPECT_EQ(p.writeback.slots, q.writeback.slots);
      EXPECT_EQ(p.writeback.keys, q.writeback.keys);
      EXPECT_EQ(x.slots[t].offsets, y.slots[t].offsets);
      EXPECT_EQ(x.slots[t].slots, y.slots[t].slots);
    }
  }
}

// Tables planned on several threads give the very same plans as one thread,
// under every policy (12 tables of different key spaces, so threads finish
// tables in varying order).
// `count` batches of `batch` one-key samples over `tables` tables, table t's
// keys from 3 + spread·t keys, skewed to the low ones (so tables differ in
// size and keys repeat).
std::vector<data::KeyBatch> SkewedBatches(uint64_t seed, int count, uint32_t batch, uint32_t tables,
                                          uint64_t spread) {
  std::mt19937_64 rng(seed);
  std::vector<data::KeyBatch> batches;
  for (int it = 0; it < count; ++it) {
    std::vector<std::vector<std::vector<Key>>> samples(batch);
    for (auto& sample : samples) {
      sample.resize(tables);
      for (uint32_t t = 0; t < tables; ++t) {
        const uint64_t space = 3 + spread * t;
        const uint64_t r = rng() % space;
        sample[t].push_back((r * r) / space);
      }
    }
    batches.push_back(MakeBatch(samples));
  }
  return batches;
}

TEST(PlannerThreadsTest, PlansAreTheSameForAnyThreadCount) {
  const uint32_t workers = 4, tables = 12, batch = 24;
  const std::vector<data::KeyBatch> batches = SkewedBatches(7, 10, batch, tables, 15);
  for (const std::string& policy : PolicyNames()) {
    SCOPED_TRACE(policy);
    PlannerOptions o = Options(policy, workers, tables, 5, batch + 5);
    o.adaptive.top_k = 6;
    if (o.policy.allocation == Allocation::kLocality) o.allocation_passes = 2;
    std::vector<IterationPlan> one;
    RunChecked(o, batches, &one);
    for (uint32_t threads : {2u, 3u, 8u}) {
      o.threads = threads;
      std::vector<IterationPlan> many;
      RunChecked(o, batches, &many);
      ASSERT_EQ(one.size(), many.size());
      for (size_t i = 0; i < one.size(); ++i) ExpectSamePlan(one[i], many[i]);
    }
  }
  PlannerOptions bad = Options("herald", 2, 1, 2, 2);
  bad.threads = 0;
  EXPECT_NE(Planner::Create(bad).status().message().find("threads: 0"), std::string::npos);
}

// Given the batch after the next too (the service's read-ahead of two), the
// planner indexes it beside the next batch's allocation: every plan is the
// same as with the next batch alone, under every policy and option, on one
// thread and on two, and each passes the checker.
TEST(PlannerReadAheadTest, TheBatchAfterTheNextChangesNoPlan) {
  const uint32_t workers = 4, tables = 6, batch = 32;
  const std::vector<data::KeyBatch> batches = SkewedBatches(13, 12, batch, tables, 30);
  for (const std::string& policy : PolicyNames()) {
    for (int variant = 0; variant < 2; ++variant) {
      PlannerOptions o = Options(policy, workers, tables, 8, batch + 8);
      o.adaptive.top_k = 3;
      const bool owns = o.policy.sync == SyncMode::kOwnership;
      if (variant == 1 && !owns) continue;
      if (variant == 1) {
        o.handoff = o.serve = o.init_on_worker = true;
        if (o.policy.allocation == Allocation::kLocality) o.allocation_passes = 2;
      }
      std::vector<IterationPlan> expected;
      RunChecked(o, batches, &expected);
      ASSERT_EQ(expected.size(), batches.size());
      for (uint32_t threads : {1u, 2u}) {
        SCOPED_TRACE(policy + " variant " + std::to_string(variant) + " threads " +
                     std::to_string(threads));
        o.threads = threads;
        auto planner = Planner::Create(o);
        ASSERT_TRUE(planner.ok()) << planner.status();
        PlanReplay checker(o.num_workers, o.slots);
        IterationPlan plan;
        for (size_t i = 0; i < batches.size(); ++i) {
          const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
          const data::KeyBatch* after = i + 2 < batches.size() ? &batches[i + 2] : nullptr;
          ASSERT_TRUE((*planner)->PlanInto(batches[i], next, after, &plan).ok());
          std::vector<PlanCounts> counts;
          const absl::Status checked = checker.Check(batches[i], plan, &counts);
          ASSERT_TRUE(checked.ok()) << checked;
          ExpectSamePlan(expected[i], plan);
        }
        EXPECT_TRUE(checker.CheckFinal().ok());
      }
    }
  }
}

// The read-ahead must come in order: a batch after the next without the
// next, a missing next after the previous call gave the batch after it, or
// a next of another size than that batch is refused, and the planner then
// plans on as if the bad call had not been made.
TEST(PlannerReadAheadTest, ReadAheadOutOfOrderIsRefused) {
  const data::KeyBatch a = OneTable({1, 2, 3, 4}), b = OneTable({2, 3, 4, 5}),
                       c = OneTable({3, 4, 5, 6}), small = OneTable({7, 8});
  auto planner = *Planner::Create(Options("herald", 2, 1, 4, 8));
  IterationPlan plan;
  absl::Status s = planner->PlanInto(a, nullptr, &b, &plan);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("without the next"), std::string::npos) << s;
  ASSERT_TRUE(planner->PlanInto(a, &b, &c, &plan).ok());
  s = planner->PlanInto(b, nullptr, &plan);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("gave the batch after it"), std::string::npos) << s;
  s = planner->PlanInto(b, &small, &plan);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is not the batch after it given before"), std::string::npos) << s;
  ASSERT_TRUE(planner->PlanInto(b, &c, &plan).ok());
  ASSERT_TRUE(planner->PlanInto(c, nullptr, &plan).ok());
  EXPECT_TRUE(plan.last);
}

// Planning into one reused IterationPlan (what the service and the
// simulator do) gives every list exactly as a fresh plan does: nothing of
// the previous iteration is left behind, also when a worker's lists shrink.
TEST(PlannerTest, PlanningIntoAReusedPlanLeavesNothingBehind) {
  std::mt19937_64 rng(11);
  const uint32_t workers = 3, tables = 4;
  std::vector<data::KeyBatch> batches;
  for (int it = 0; it < 12; ++it) {
    const uint32_t batch = it % 3 == 0 ? 30 : 6;  // big and small iterations alternate
    std::vector<std::vector<std::vector<Key>>> samples(batch);
    for (auto& sample : samples) {
      sample.resize(tables);
      for (uint32_t t = 0; t < tables; ++t) sample[t].push_back(rng() % (4 + 20 * t));
    }
    batches.push_back(MakeBatch(samples));
  }
  for (const std::string& policy : PolicyNames()) {
    SCOPED_TRACE(policy);
    PlannerOptions o = Options(policy, workers, tables, 6, 40);
    o.adaptive.top_k = 2;
    std::vector<IterationPlan> fresh;
    RunChecked(o, batches, &fresh);
    ASSERT_EQ(fresh.size(), batches.size());
    auto planner = Planner::Create(o);
    ASSERT_TRUE(planner.ok()) << planner.status();
    IterationPlan reused;
    for (size_t i = 0; i < batches.size(); ++i) {
      const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
      ASSERT_TRUE((*planner)->PlanInto(batches[i], next, &reused).ok());
      EXPECT_EQ(reused.iteration, fresh[i].iteration);
      EXPECT_EQ(reused.last, fresh[i].last);
      ExpectSamePlan(fresh[i], reused);
    }
  }
}

}  // namespace
}  // namespace herald::scheduler

namespace herald::scheduler {
namespace {

// Plans `batches` (allocated as `forced` says, when given), changes each
// plan with tamper(iteration, &plan) and returns the checker's verdict.
template <typename Tamper>
absl::Status CheckTampered(const PlannerOptions& o, const std::vector<data::KeyBatch>& batches,
                           const std::vector<std::vector<uint32_t>>& forced, Tamper tamper) {
  auto planner = *Planner::Create(o);
  for (const std::vector<uint32_t>& worker_of : forced) planner->ForceAllocation(worker_of);
  PlanReplay checker(o.num_workers, o.slots);
  std::vector<PlanCounts> counts;
  absl::Status status;
  for (size_t i = 0; i < batches.size() && status.ok(); ++i) {
    IterationPlan plan =
        *planner->Plan(batches[i], i + 1 < batches.size() ? &batches[i + 1] : nullptr);
    tamper(i, &plan);
    status = checker.Check(batches[i], plan, &counts);
  }
  return status;
}

// The checker is only worth its figures if it rejects broken plans.
TEST(PlanCheckerTest, RejectsAMissingWriteBackAndAFalseOwner) {
  const std::vector<data::KeyBatch> batches = {MakeBatch({{{7}}, {{8}}}),
                                               MakeBatch({{{7}}, {{7}}})};
  const PlannerOptions o = Options("herald", 2, 1, 8, 8);
  auto plan_all = [&](auto tamper) { return CheckTampered(o, batches, {}, tamper); };
  EXPECT_TRUE(plan_all([](size_t, IterationPlan*) {}).ok());
  const absl::Status no_writeback = plan_all([](size_t i, IterationPlan* plan) {
    if (i != 0) return;
    for (WorkerPlan& wp : plan->workers) {
      wp.tables[0].writeback.slots.clear();
      wp.tables[0].writeback.keys.clear();
    }
  });
  EXPECT_NE(no_writeback.message().find("outdated"), std::string::npos) << no_writeback;
  const absl::Status two_owners = plan_all([](size_t i, IterationPlan* plan) {
    if (i != 1) return;
    for (WorkerPlan& wp : plan->workers) {
      auto& tp = wp.tables[0];
      tp.owned_slots.insert(tp.owned_slots.end(), tp.push.slots.begin(), tp.push.slots.end());
      tp.push.slots.clear();
      tp.push.keys.clear();
    }
  });
  EXPECT_NE(two_owners.message().find("updates would be lost"), std::string::npos) << two_owners;
}

// A worker may not initialise a row some plan already trained.
TEST(PlanCheckerTest, RejectsInitialisingATrainedRow) {
  const std::vector<data::KeyBatch> batches = {OneTable({1, 2}), OneTable({1, 2})};
  const PlannerOptions o = Options("nocache", 2, 1, 4, 8);
  const absl::Status reinit = CheckTampered(o, batches, {}, [](size_t i, IterationPlan* plan) {
    if (i != 1) return;
    plan::TablePlan& tp = plan->workers[0].tables[0];
    tp.init.keys = tp.fetch.keys;
    tp.init.slots = tp.fetch.slots;
    tp.fetch.keys.clear();
    tp.fetch.slots.clear();
    tp.fetch.early.clear();
  });
  EXPECT_NE(reinit.message().find("which was trained before"), std::string::npos) << reinit;
}

// Mutations of served plans (the batches of
// ServedRowsStayWithTheirOwnerWhichGathersEveryGradient) the checker catches.
TEST(PlanCheckerTest, RejectsServedRowsWhoseGradientsMissTheirOwner) {
  const std::vector<data::KeyBatch> batches = {MakeBatch({{{7, 9}}, {{9}}}),
                                               MakeBatch({{{7}}, {{7}}})};
  PlannerOptions o = Options("herald", 2, 1, 8, 8);
  o.serve = true;
  auto plan_all = [&](auto tamper) { return CheckTampered(o, batches, {{0, 1}, {0, 1}}, tamper); };
  EXPECT_TRUE(plan_all([](size_t, IterationPlan*) {}).ok());
  auto drop_gather = [](plan::TablePlan* owner) {
    owner->gather.slots.clear();
    owner->gather.keys.clear();
    owner->gather.peers.clear();
  };
  const absl::Status ungathered = plan_all([&](size_t i, IterationPlan* plan) {
    if (i == 0) drop_gather(&plan->workers[0].tables[0]);
  });
  EXPECT_NE(ungathered.message().find("which does not gather it"), std::string::npos) << ungathered;
  // Worker 1 pushes its gradient of the served row to the PS instead.
  const absl::Status to_ps = plan_all([&](size_t i, IterationPlan* plan) {
    if (i != 1) return;
    plan::TablePlan& tp = plan->workers[1].tables[0];
    tp.push.slots = tp.remote.slots;
    tp.push.keys = tp.remote.keys;
    tp.remote.slots.clear();
    tp.remote.keys.clear();
    tp.remote.peers.clear();
    drop_gather(&plan->workers[0].tables[0]);
  });
  EXPECT_NE(to_ps.message().find("not all sending it their gradients"), std::string::npos) << to_ps;
  // Worker 0 keeps the copy it should have sent.
  const absl::Status unsent = plan_all([&](size_t i, IterationPlan* plan) {
    if (i != 0) return;
    plan::TablePlan& tp = plan->workers[0].tables[0];
    tp.send.slots.clear();
    tp.send.keys.clear();
    tp.send.peers.clear();
    tp.send.served.clear();
  });
  EXPECT_NE(unsent.message().find("expects 1 incoming rows, 0 are sent"), std::string::npos)
      << unsent;
}

}  // namespace
}  // namespace herald::scheduler

namespace herald::scheduler {
namespace {

TEST(PlannerWarmStartTest, FetchesTheHottestKeysAtIterationZeroAndHitsThemLater) {
  PlannerOptions o = Options("herald", 2, 1, 3, 4);
  o.warm_keys = {{9, 8, 7, 1}};
  auto planner = Planner::Create(o);
  ASSERT_TRUE(planner.ok()) << planner.status();
  (*planner)->ForceAllocation({0, 1});
  (*planner)->ForceAllocation({0, 1});
  const std::vector<data::KeyBatch> batches = {OneTable({1, 2}), OneTable({9, 8})};
  PlanReplay checker(2, o.slots);
  std::vector<PlanCounts> counts;

  auto first = (*planner)->Plan(batches[0], &batches[1]);
  ASSERT_TRUE(first.ok()) << first.status();
  // Capacity 3, one row trained: room for the two hottest keys it does not train.
  EXPECT_EQ(first->workers[0].tables[0].fetch.keys, (std::vector<Key>{9, 8, 1}));
  EXPECT_EQ(first->workers[1].tables[0].fetch.keys, (std::vector<Key>{9, 8, 2}));
  EXPECT_TRUE(first->workers[0].tables[0].evict.slots.empty());
  EXPECT_EQ(first->workers[0].counts.fetched, 3u);
  ASSERT_TRUE(checker.Check(batches[0], *first, &counts).ok());
  EXPECT_EQ(counts[0].fetched, 3u);

  auto second = (*planner)->Plan(batches[1], nullptr);
  ASSERT_TRUE(second.ok()) << second.status();
  for (uint32_t w = 0; w < 2; ++w) {
    EXPECT_TRUE(second->workers[w].tables[0].fetch.keys.empty()) << "worker " << w;
    EXPECT_EQ(second->workers[w].counts.hits, 1u);
  }
  ASSERT_TRUE(checker.Check(batches[1], *second, &counts).ok());
  EXPECT_TRUE(checker.CheckFinal().ok());
}

TEST(PlannerWarmStartTest, AFullCacheWarmsNothingAndBadOptionsAreRefused) {
  PlannerOptions o = Options("herald", 1, 1, 2, 4);
  o.warm_keys = {{9, 8}};
  auto planner = Planner::Create(o);
  ASSERT_TRUE(planner.ok());
  auto plan = (*planner)->Plan(OneTable({1, 2}), nullptr);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->workers[0].tables[0].fetch.keys, (std::vector<Key>{1, 2}));

  o.warm_keys = {{9}, {8}};
  EXPECT_NE(Planner::Create(o).status().message().find("warm_keys: 2 tables"), std::string::npos);
}

}  // namespace
}  // namespace herald::scheduler
