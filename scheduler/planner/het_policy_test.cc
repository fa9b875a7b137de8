// Policy het (SyncMode::kStale): staleness 0 plans exactly what vanilla
// plans, every plan stays within HET's bound under the independent
// StalenessChecker, the same job plans the same bits, a saved planner
// continues bit for bit, and the checker catches plans that break the bound
// or lose a held write.

#include <random>

#include "common/model_consistency.h"
#include "common/status.h"
#include "gtest/gtest.h"
#include "scheduler/planner/plan_digest.h"
#include "scheduler/planner/plan_replay.h"
#include "scheduler/planner/planner.h"
#include "scheduler/planner/scheduling_spec.h"
#include "scheduler/planner/simulator.h"
#include "scheduler/planner/staleness_checker.h"

namespace herald::scheduler {
namespace {

// `count` batches of `batch` samples over `tables` tables, 0-3 keys per
// sample and table, skewed towards small keys (a few hot rows, many cold).
std::vector<data::KeyBatch> SkewedBatches(uint64_t seed, int count, uint32_t batch,
                                          uint32_t tables) {
  std::mt19937_64 rng(seed);
  std::vector<data::KeyBatch> batches(count);
  for (data::KeyBatch& b : batches) {
    b.num_samples = batch;
    b.tables.resize(tables);
    for (uint32_t s = 0; s < batch; ++s) {
      b.labels.push_back(0.0f);
      for (uint32_t t = 0; t < tables; ++t) {
        const uint64_t space = 8 + 40 * t;
        for (uint64_t k = rng() % 4; k > 0; --k) {
          const uint64_t r = rng() % space;
          b.tables[t].keys.push_back((r * r) / space);
        }
        b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
      }
    }
  }
  return batches;
}

PlannerOptions Options(const std::string& policy, uint32_t workers, uint32_t tables,
                       uint32_t capacity, uint32_t batch) {
  PlannerOptions o;
  o.policy = *PolicyByName(policy);
  o.num_workers = workers;
  o.capacity.assign(tables, capacity);
  o.slots.assign(tables, capacity + batch * 3);
  o.seed = 7;
  return o;
}

// The digest of every plan, in order; every plan replayed by the checker
// the policy calls for. Counts are checked against the checker's.
std::vector<uint64_t> Digests(const PlannerOptions& o, const std::vector<data::KeyBatch>& batches,
                              uint64_t* max_behind = nullptr) {
  auto planner = Planner::Create(o);
  EXPECT_TRUE(planner.ok()) << planner.status();
  if (!planner.ok()) return {};
  StalenessChecker stale(o.num_workers, o.slots, o.staleness);
  PlanReplay exact(o.num_workers, o.slots);
  const bool het = o.policy.sync == SyncMode::kStale;
  std::vector<uint64_t> digests;
  for (size_t i = 0; i < batches.size(); ++i) {
    const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
    auto plan = (*planner)->Plan(batches[i], next);
    EXPECT_TRUE(plan.ok()) << plan.status();
    if (!plan.ok()) return digests;
    std::vector<PlanCounts> counts;
    const absl::Status checked =
        het ? stale.Check(batches[i], *plan, &counts) : exact.Check(batches[i], *plan, &counts);
    EXPECT_TRUE(checked.ok()) << checked;
    if (!checked.ok()) return digests;
    for (uint32_t w = 0; w < o.num_workers; ++w) {
      EXPECT_EQ(plan->workers[w].counts.uses, counts[w].uses);
      EXPECT_EQ(plan->workers[w].counts.hits, counts[w].hits);
      EXPECT_EQ(plan->workers[w].counts.fetched, counts[w].fetched);
      EXPECT_EQ(plan->workers[w].counts.pushed, counts[w].pushed);
    }
    digests.push_back(PlanDigest(*plan, kPlanDigestSeed));
  }
  const absl::Status final_check = het ? stale.CheckFinal() : exact.CheckFinal();
  EXPECT_TRUE(final_check.ok()) << final_check;
  if (max_behind != nullptr) *max_behind = stale.max_behind();
  return digests;
}

TEST(HetPolicyTest, StalenessZeroPlansExactlyWhatVanillaPlans) {
  for (uint32_t workers : {1u, 2u, 4u, 9u}) {
    const uint32_t batch = 6 * workers;
    const auto batches = SkewedBatches(workers, 20, batch, 3);
    PlannerOptions vanilla = Options("vanilla", workers, 3, 10, batch);
    PlannerOptions het = Options("het", workers, 3, 10, batch);
    SCOPED_TRACE(workers);
    EXPECT_EQ(Digests(het, batches), Digests(vanilla, batches));
    vanilla.flush_every = het.flush_every = {3};
    vanilla.init_on_worker = het.init_on_worker = true;
    vanilla.warm_keys = het.warm_keys = {{0, 1, 2}, {0, 1}, {4, 0}};
    EXPECT_EQ(Digests(het, batches), Digests(vanilla, batches));
  }
}

TEST(HetPolicyTest, EveryPlanStaysWithinTheBoundAndEveryHeldWriteReachesThePs) {
  for (uint32_t staleness : {1u, 2u, 5u, 100u}) {
    for (uint32_t workers : {1u, 3u, 8u, 70u}) {
      for (uint32_t capacity : {4u, 40u}) {  // evictions of held copies, and few evictions
        const uint32_t batch = 4 * workers + 3;
        const auto batches = SkewedBatches(staleness * 1000 + workers, 25, batch, 3);
        PlannerOptions o = Options("het", workers, 3, capacity, batch);
        o.staleness = staleness;
        o.threads = 1 + workers % 3;
        SCOPED_TRACE(testing::Message()
                     << "s=" << staleness << " workers=" << workers << " capacity=" << capacity);
        uint64_t behind = 0;
        EXPECT_EQ(Digests(o, batches, &behind).size(), batches.size());
        EXPECT_LE(behind, staleness);
        o.flush_every = {4};  // checkpoints: every held write flushed
        o.init_on_worker = true;
        EXPECT_EQ(Digests(o, batches).size(), batches.size());
        o.policy.allocation = Allocation::kLocality;  // Herald's allocation, HET's consistency
        o.allocation_passes = 2;
        EXPECT_EQ(Digests(o, batches).size(), batches.size());
      }
    }
  }
}

// The simulator's result for `o` over `batches`, plans checked.
SimulationResult Simulated(const PlannerOptions& o, const std::vector<data::KeyBatch>& batches) {
  size_t i = 0;
  auto r =
      Simulate(SimulationOptions{o, 0, true}, [&](data::KeyBatch* out) -> absl::StatusOr<bool> {
        if (i == batches.size()) return false;
        *out = batches[i++];
        return true;
      });
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : SimulationResult();
}

TEST(HetPolicyTest, StaleWritesSaveRowsAndReadsAreActuallyStale) {
  const uint32_t workers = 4, batch = 40;
  const auto batches = SkewedBatches(3, 30, batch, 2);
  const SimulationResult vanilla = Simulated(Options("vanilla", workers, 2, 40, batch), batches);
  PlannerOptions o = Options("het", workers, 2, 40, batch);
  o.staleness = 10;
  const SimulationResult het = Simulated(o, batches);
  const uint64_t moved_vanilla = vanilla.total.fetched + vanilla.total.pushed;
  const uint64_t moved_het = het.total.fetched + het.total.pushed;
  const uint64_t behind = het.max_staleness_read;
  EXPECT_LT(moved_het * 2, moved_vanilla) << moved_het << " vs " << moved_vanilla;
  // Herald's allocation with HET's consistency moves fewer still.
  o.policy.allocation = Allocation::kLocality;
  const SimulationResult located = Simulated(o, batches);
  EXPECT_LT(located.total.fetched + located.total.pushed, moved_het);
  EXPECT_GT(behind, 0u);  // some read was stale: not the exact model
  EXPECT_LE(behind, 10u);
}

TEST(HetPolicyTest, SameJobSamePlansForAnyThreadCountAndAcrossASavedState) {
  const uint32_t workers = 5, batch = 30;
  const auto batches = SkewedBatches(11, 16, batch, 3);
  PlannerOptions o = Options("het", workers, 3, 12, batch);
  o.staleness = 3;
  const auto once = Digests(o, batches);
  EXPECT_EQ(Digests(o, batches), once);
  o.threads = 3;
  EXPECT_EQ(Digests(o, batches), once);

  // Saved after 7 plans and loaded: the rest are the same bits.
  auto planner = *Planner::Create(o);
  for (size_t i = 0; i < 7; ++i) ASSERT_TRUE(planner->Plan(batches[i], &batches[i + 1]).ok());
  auto bytes = planner->SaveState();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  PlannerOptions resumed = o;
  resumed.first_iteration = 7;
  auto loaded = Planner::LoadState(resumed, *bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (size_t i = 7; i < batches.size(); ++i) {
    const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
    auto plan = (*loaded)->Plan(batches[i], next);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(PlanDigest(*plan, kPlanDigestSeed), once[i]) << i;
  }
  // Another staleness does not load.
  resumed.staleness = 4;
  EXPECT_FALSE(Planner::LoadState(resumed, *bytes).ok());
}

// Plans of a het job, one of them changed by `tamper`, through the checker.
absl::Status CheckTampered(const PlannerOptions& o, const std::vector<data::KeyBatch>& batches,
                           size_t at, const std::function<void(IterationPlan*)>& tamper) {
  auto planner = *Planner::Create(o);
  StalenessChecker checker(o.num_workers, o.slots, o.staleness);
  for (size_t i = 0; i < batches.size(); ++i) {
    const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
    auto plan = planner->Plan(batches[i], next);
    if (!plan.ok()) return plan.status();
    if (i == at) tamper(&*plan);
    std::vector<PlanCounts> counts;
    HERALD_RETURN_IF_ERROR(checker.Check(batches[i], *plan, &counts));
  }
  return checker.CheckFinal();
}

TEST(StalenessCheckerTest, CatchesAHeldWriteLostAReadPastTheBoundAndAWriteHeldTooLong) {
  const uint32_t workers = 3, batch = 24;
  const auto batches = SkewedBatches(5, 12, batch, 1);
  PlannerOptions o = Options("het", workers, 1, 30, batch);
  o.staleness = 2;
  ASSERT_TRUE(CheckTampered(o, batches, 0, [](IterationPlan*) {}).ok());

  // The last plan's flushes dropped: held gradients never reach the PS.
  absl::Status lost = CheckTampered(o, batches, batches.size() - 1, [](IterationPlan* p) {
    for (WorkerPlan& w : p->workers) w.tables[0].flush = {};
  });
  EXPECT_NE(lost.message().find("never received"), std::string::npos) << lost;

  // Every push turned into a hold: writes held past the bound.
  absl::Status held = CheckTampered(o, batches, 4, [](IterationPlan* p) {
    for (WorkerPlan& w : p->workers) {
      plan::TablePlan& tp = w.tables[0];
      tp.hold.slots.insert(tp.hold.slots.end(), tp.push.slots.begin(), tp.push.slots.end());
      tp.hold.keys.insert(tp.hold.keys.end(), tp.push.keys.begin(), tp.push.keys.end());
      tp.push = {};
    }
  });
  EXPECT_FALSE(held.ok());

  // Every fetch dropped at one iteration: reads of outdated or missing copies.
  absl::Status stale = CheckTampered(o, batches, 6, [](IterationPlan* p) {
    for (WorkerPlan& w : p->workers) w.tables[0].fetch = {};
  });
  EXPECT_FALSE(stale.ok());

  // A list het never uses.
  absl::Status unused = CheckTampered(o, batches, 1, [](IterationPlan* p) {
    p->workers[0].tables[0].writeback.slots.push_back(0);
    p->workers[0].tables[0].writeback.keys.push_back(0);
  });
  EXPECT_NE(unused.message().find("writeback"), std::string::npos) << unused;
}

TEST(HetPolicyTest, StalenessIsValidatedByName) {
  proto::SchedulingSpec s;
  s.set_policy(proto::POLICY_VANILLA);
  s.set_cache_fraction(0.1f);
  s.set_staleness(3);
  absl::Status vanilla = ValidateSchedulingSpec(s, 2);
  EXPECT_NE(vanilla.message().find("scheduling.staleness: 3 with policy vanilla"),
            std::string::npos)
      << vanilla;
  s.set_policy(proto::POLICY_HET);
  EXPECT_TRUE(ValidateSchedulingSpec(s, 2).ok());
  s.set_staleness(kMaxStaleness + 1);
  EXPECT_NE(ValidateSchedulingSpec(s, 2).message().find("scheduling.staleness"), std::string::npos);
  s.set_staleness(1);
  s.set_handoff(true);
  EXPECT_FALSE(ValidateSchedulingSpec(s, 2).ok());
  EXPECT_EQ(PolicyKindByName("het").value(), proto::POLICY_HET);

  // Herald's allocation with HET's consistency: het only.
  s.set_handoff(false);
  s.set_allocation(proto::ALLOCATION_LOCATION_AWARE);
  ASSERT_TRUE(PolicyOfSpec(s).ok()) << PolicyOfSpec(s).status();
  EXPECT_EQ(PolicyOfSpec(s)->allocation, Allocation::kLocality);
  s.set_allocation_passes(2);
  EXPECT_TRUE(ValidateSchedulingSpec(s, 2).ok()) << ValidateSchedulingSpec(s, 2);
  s.set_policy(proto::POLICY_VANILLA);
  s.set_staleness(0);
  EXPECT_NE(ValidateSchedulingSpec(s, 2).message().find("scheduling.allocation"),
            std::string::npos);
}

TEST(HetPolicyTest, OnlyHetWithStalenessIsNotSynchronousSgd) {
  proto::SchedulingSpec s;
  s.set_policy(proto::POLICY_HET);
  EXPECT_EQ(ModelConsistency(s), "synchronous SGD");  // staleness 0 is vanilla
  s.set_staleness(10);
  EXPECT_FALSE(IsSynchronousSgd(s));
  EXPECT_EQ(ModelConsistency(s), "bounded staleness 10 (het): not the synchronous-SGD model");
  s.set_policy(proto::POLICY_HERALD);
  EXPECT_TRUE(IsSynchronousSgd(s));
}

}  // namespace
}  // namespace herald::scheduler
