#include "scheduler/planner/scheduling_spec.h"

#include <string>

#include "common/scheduling_defaults.h"
#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

proto::SchedulingSpec Spec(proto::PolicyKind policy) {
  proto::SchedulingSpec s;
  s.set_policy(policy);
  s.set_cache_fraction(0.1f);
  return s;
}

std::string Error(const proto::SchedulingSpec& s, uint32_t tables = 4) {
  return std::string(ValidateSchedulingSpec(s, tables).message());
}

TEST(SchedulingSpec, EveryFieldIsCheckedAgainstItsPolicyAndNamed) {
  proto::SchedulingSpec s = Spec(proto::POLICY_VANILLA);
  s.set_handoff(true);
  EXPECT_EQ(Error(s).rfind("scheduling.handoff: policy vanilla owns no rows", 0), 0u) << Error(s);
  s = Spec(proto::POLICY_HERALD_ALLOC_ONLY);
  s.set_serve(true);
  EXPECT_EQ(Error(s).rfind("scheduling.serve: policy herald-alloc-only owns no rows", 0), 0u);
  s = Spec(proto::POLICY_HERALD_COMM_ONLY);
  s.set_allocation_passes(2);
  EXPECT_EQ(Error(s).rfind("scheduling.allocation_passes: 2 with policy herald-comm-only", 0), 0u);
  s = Spec(proto::POLICY_HERALD);
  s.set_allocation_passes(kMaxAllocationPasses + 1);
  EXPECT_EQ(Error(s), "scheduling.allocation_passes: 9, want 0..8 (0: one)");
  s = Spec(proto::POLICY_NOCACHE);
  s.set_warm_start(true);
  EXPECT_EQ(Error(s), "scheduling.warm_start: policy nocache keeps no cache to warm");
  s = Spec(proto::POLICY_HERALD_ADAPTIVE);
  EXPECT_NE(Error(s).find("herald-adaptive needs adaptive_top_k > 0"), std::string::npos);
  s.set_adaptive_top_k(5);
  EXPECT_EQ(Error(s), "scheduling.adaptive_top_k: 5 for 4 tables");
  s = Spec(proto::POLICY_HERALD);
  s.set_adaptive_budget_ms(1);
  EXPECT_NE(Error(s).find("set only with policy herald-adaptive (not herald)"), std::string::npos);
  s = Spec(proto::POLICY_HERALD);
  s.set_cache_fraction(0);
  EXPECT_NE(Error(s).find("scheduling.cache_fraction: 0 not in (0, 1]"), std::string::npos);
  s.set_policy(static_cast<proto::PolicyKind>(99));
  EXPECT_EQ(Error(s), "scheduling.policy: unknown value 99");
}

TEST(SchedulingSpec, PlannerOptionsCarryEveryField) {
  proto::SchedulingSpec s = Spec(proto::POLICY_HERALD_ADAPTIVE);
  s.set_eviction(proto::EVICTION_LFU);
  s.set_adaptive_top_k(2);
  s.set_handoff(true);
  s.set_serve(true);
  s.set_init_on_worker(true);
  s.set_allocation_passes(3);
  PlannerResources r;
  r.num_workers = 3;
  r.capacity = {4, 5};
  r.slots = {8, 9};
  r.warm_keys = {{1}, {2}};
  r.seed = 42;
  r.threads = 2;
  auto o = PlannerOptionsFromSpec(s, r);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy.name, "herald-adaptive");
  EXPECT_EQ(o->eviction, EvictionKind::kLfu);
  EXPECT_EQ(o->adaptive.top_k, 2u);
  EXPECT_TRUE(o->handoff && o->serve && o->init_on_worker);
  EXPECT_EQ(o->allocation_passes, 3u);
  EXPECT_EQ(o->num_workers, 3u);
  EXPECT_EQ(o->capacity, r.capacity);
  EXPECT_EQ(o->slots, r.slots);
  EXPECT_EQ(o->warm_keys, r.warm_keys);
  EXPECT_EQ(o->seed, 42u);
  EXPECT_EQ(o->threads, 2u);
  EXPECT_TRUE(Planner::Create(*o).ok());

  s = Spec(proto::POLICY_KIND_UNSPECIFIED);  // herald with its defaults
  o = PlannerOptionsFromSpec(s, r);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->policy.name, "herald");
  EXPECT_TRUE(o->handoff && o->serve && o->init_on_worker);
  EXPECT_EQ(o->allocation_passes, 2u);
  EXPECT_EQ(o->eviction, EvictionKind::kLru);

  s = Spec(proto::POLICY_VANILLA);  // the baseline: every option off
  o = PlannerOptionsFromSpec(s, r);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->handoff || o->serve || o->init_on_worker);
  EXPECT_EQ(o->allocation_passes, 1u);
  s.set_policy(proto::POLICY_KIND_UNSPECIFIED);

  s.set_handoff(true);
  s.set_policy(proto::POLICY_VANILLA);
  EXPECT_FALSE(PlannerOptionsFromSpec(s, r).ok());
}

// The defaults (common/scheduling_defaults.h, written by policy kind) turn
// on exactly what each policy can do, so a spec that sets nothing is valid.
TEST(SchedulingSpec, DefaultsTurnOnWhatEachPolicyCanDo) {
  for (proto::PolicyKind kind :
       {proto::POLICY_KIND_UNSPECIFIED, proto::POLICY_NOCACHE, proto::POLICY_VANILLA,
        proto::POLICY_HERALD, proto::POLICY_HERALD_ADAPTIVE, proto::POLICY_HERALD_ALLOC_ONLY,
        proto::POLICY_HERALD_COMM_ONLY}) {
    SCOPED_TRACE(proto::PolicyKind_Name(kind));
    proto::SchedulingSpec s = Spec(kind);
    if (kind == proto::POLICY_HERALD_ADAPTIVE) s.set_adaptive_top_k(2);
    ResolveSchedulingDefaults(&s);
    const Policy policy = *PolicyOfSpec(s);
    const bool owns = policy.sync == SyncMode::kOwnership;
    EXPECT_EQ(s.handoff(), owns);
    EXPECT_EQ(s.serve(), owns);
    EXPECT_EQ(s.init_on_worker(), policy.name.rfind("herald", 0) == 0);
    EXPECT_EQ(s.allocation_passes(), policy.allocation == Allocation::kLocality ? 2u : 1u);
    EXPECT_TRUE(ValidateSchedulingSpec(s, 4).ok()) << ValidateSchedulingSpec(s, 4);
    // A value the spec sets is kept.
    proto::SchedulingSpec off = Spec(kind);
    off.set_handoff(false);
    off.set_allocation_passes(1);
    ResolveSchedulingDefaults(&off);
    EXPECT_FALSE(off.handoff());
    EXPECT_EQ(off.allocation_passes(), 1u);
  }
}

}  // namespace
}  // namespace herald::scheduler
