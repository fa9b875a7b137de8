#include "scheduler/planner/scheduling_spec.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/scheduling_defaults.h"
#include "common/status.h"

namespace herald::scheduler {

namespace {

absl::StatusOr<Policy> PolicyOfKind(const proto::SchedulingSpec& scheduling) {
  switch (scheduling.policy()) {
    case proto::POLICY_NOCACHE:
      return PolicyByName("nocache");
    case proto::POLICY_VANILLA:
      return PolicyByName("vanilla");
    case proto::POLICY_KIND_UNSPECIFIED:
    case proto::POLICY_HERALD:
      return PolicyByName("herald");
    case proto::POLICY_HERALD_ADAPTIVE:
      return PolicyByName("herald-adaptive");
    case proto::POLICY_HERALD_ALLOC_ONLY:
      return PolicyByName("herald-alloc-only");
    case proto::POLICY_HERALD_COMM_ONLY:
      return PolicyByName("herald-comm-only");
    case proto::POLICY_HET:
      return PolicyByName("het");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("scheduling.policy: unknown value ", scheduling.policy()));
  }
}

}  // namespace

absl::StatusOr<Policy> PolicyOfSpec(const proto::SchedulingSpec& scheduling) {
  HERALD_ASSIGN_OR_RETURN(Policy policy, PolicyOfKind(scheduling));
  if (scheduling.allocation() == proto::ALLOCATION_DEFAULT) return policy;
  if (policy.sync != SyncMode::kStale) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scheduling.allocation: ", proto::AllocationChoice_Name(scheduling.allocation()),
        " with policy ", policy.name, ", which has its own (set it only with het)"));
  }
  if (scheduling.allocation() != proto::ALLOCATION_LOCATION_AWARE) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.allocation: unknown value ", scheduling.allocation()));
  }
  policy.allocation = Allocation::kLocality;
  return policy;
}

absl::StatusOr<proto::PolicyKind> PolicyKindByName(const std::string& name) {
  HERALD_RETURN_IF_ERROR(PolicyByName(name).status());
  for (int kind = proto::PolicyKind_MIN; kind <= proto::PolicyKind_MAX; ++kind) {
    if (!proto::PolicyKind_IsValid(kind) || kind == proto::POLICY_KIND_UNSPECIFIED) continue;
    proto::SchedulingSpec s;
    s.set_policy(static_cast<proto::PolicyKind>(kind));
    if (PolicyOfKind(s)->name == name) return s.policy();
  }
  return absl::InvalidArgumentError(absl::StrCat("policy '", name, "' has no job spec value"));
}

absl::Status ValidateSchedulingSpec(const proto::SchedulingSpec& s, uint32_t num_tables) {
  HERALD_ASSIGN_OR_RETURN(Policy policy, PolicyOfSpec(s));
  if (policy.keep_cache && s.cache_rows_per_worker() == 0 &&
      !(s.cache_fraction() > 0 && s.cache_fraction() <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.cache_fraction: ", s.cache_fraction(),
                     " not in (0, 1] (or set scheduling.cache_rows_per_worker)"));
  }
  if (s.cache_rows_per_worker() >= kMaxSlotsPerTable) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.cache_rows_per_worker: ", s.cache_rows_per_worker(), ", want < ",
                     kMaxSlotsPerTable, " (slots per worker and table)"));
  }
  if (s.handoff() && policy.sync != SyncMode::kOwnership) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.handoff: policy ", policy.name,
                     " owns no rows, so none is ever held dirty to hand off (want herald, "
                     "herald-adaptive or herald-comm-only)"));
  }
  if (s.serve() && policy.sync != SyncMode::kOwnership) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.serve: policy ", policy.name,
                     " owns no rows, so none is ever held dirty to serve (want herald, "
                     "herald-adaptive or herald-comm-only)"));
  }
  if (s.allocation_passes() > kMaxAllocationPasses) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.allocation_passes: ", s.allocation_passes(), ", want 0..",
                     kMaxAllocationPasses, " (0: one)"));
  }
  if (s.allocation_passes() > 1 && policy.allocation != Allocation::kLocality) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scheduling.allocation_passes: ", s.allocation_passes(), " with policy ", policy.name,
        ", whose allocation is not location-aware (want herald, herald-adaptive or "
        "herald-alloc-only)"));
  }
  if (s.adaptive_budget_ms() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.adaptive_budget_ms: ", s.adaptive_budget_ms(), ", want ≥ 0"));
  }
  if (policy.adaptive_tables) {
    if (s.adaptive_top_k() == 0 && !(s.adaptive_budget_ms() > 0)) {
      return absl::InvalidArgumentError(
          "scheduling.adaptive_top_k / adaptive_budget_ms: herald-adaptive needs "
          "adaptive_top_k > 0 or adaptive_budget_ms > 0");
    }
    if (s.adaptive_top_k() > num_tables) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scheduling.adaptive_top_k: ", s.adaptive_top_k(), " for ", num_tables, " tables"));
    }
  } else if (s.adaptive_top_k() != 0 || s.adaptive_budget_ms() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.adaptive_top_k / adaptive_budget_ms: set only with policy "
                     "herald-adaptive (not ",
                     policy.name, ")"));
  }
  if (s.staleness() > kMaxStaleness) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.staleness: ", s.staleness(), ", want 0..", kMaxStaleness));
  }
  if (s.staleness() != 0 && policy.sync != SyncMode::kStale) {
    return absl::InvalidArgumentError(absl::StrCat("scheduling.staleness: ", s.staleness(),
                                                   " with policy ", policy.name,
                                                   ", which is exact (set it only with het)"));
  }
  if (s.warm_start() && !policy.keep_cache) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.warm_start: policy ", policy.name, " keeps no cache to warm"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PlannerOptions> PlannerOptionsFromSpec(const proto::SchedulingSpec& spec,
                                                      PlannerResources resources) {
  proto::SchedulingSpec s = spec;
  ResolveSchedulingDefaults(&s);
  HERALD_RETURN_IF_ERROR(
      ValidateSchedulingSpec(s, static_cast<uint32_t>(resources.capacity.size())));
  PlannerOptions o;
  HERALD_ASSIGN_OR_RETURN(o.policy, PolicyOfSpec(s));
  o.num_workers = resources.num_workers;
  o.capacity = std::move(resources.capacity);
  o.slots = std::move(resources.slots);
  o.eviction = s.eviction() == proto::EVICTION_LFU ? EvictionKind::kLfu : EvictionKind::kLru;
  o.seed = resources.seed;
  o.warm_keys = std::move(resources.warm_keys);
  o.adaptive.top_k = s.adaptive_top_k();
  o.adaptive.budget_ms = s.adaptive_budget_ms();
  o.threads = resources.threads;
  o.flush_every = resources.flush_every;
  o.flush_before_new_files = resources.flush_before_new_files;
  o.handoff = s.handoff();
  o.serve = s.serve();
  o.init_on_worker = s.init_on_worker();
  o.allocation_passes = s.allocation_passes();
  o.staleness = s.staleness();
  return o;
}

}  // namespace herald::scheduler
