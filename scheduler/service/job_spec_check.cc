#include "scheduler/service/job_spec_check.h"

#include "absl/strings/str_cat.h"
#include "common/data/schema.h"
#include "common/model_spec_check.h"
#include "common/status.h"
#include "scheduler/herald/planner.h"

namespace herald::scheduler {

absl::StatusOr<Policy> PolicyOfSpec(const proto::JobSpec& spec) {
  switch (spec.scheduling().policy()) {
    case proto::POLICY_NOCACHE:
      return PolicyByName("nocache");
    case proto::POLICY_VANILLA:
      return PolicyByName("vanilla");
    case proto::POLICY_KIND_UNSPECIFIED:
    case proto::POLICY_HERALD:
      return PolicyByName("herald");
    case proto::POLICY_HERALD_ADAPTIVE:
      return PolicyByName("herald-adaptive");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("scheduling.policy: unknown value ", spec.scheduling().policy()));
  }
}

absl::Status ValidateJobSpec(const proto::JobSpec& spec) {
  if (spec.tables_size() == 0) return absl::InvalidArgumentError("tables: at least one table");
  if (spec.tables_size() > static_cast<int>(data::DataSchema::kMaxSparse)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tables: ", spec.tables_size(), " tables, at most ", data::DataSchema::kMaxSparse));
  }
  if (spec.num_dense() > data::DataSchema::kMaxDense) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_dense: ", spec.num_dense(), ", at most ", data::DataSchema::kMaxDense));
  }
  for (int t = 0; t < spec.tables_size(); ++t) {
    if (spec.tables(t).dim() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("tables[", t, "].dim: must be > 0"));
    }
  }
  HERALD_RETURN_IF_ERROR(ValidateModelSpec(spec));
  if (spec.global_batch_size() == 0) {
    return absl::InvalidArgumentError("global_batch_size: must be > 0");
  }
  if (spec.iterations() == 0 && spec.epochs() == 0) {
    return absl::InvalidArgumentError("iterations: set iterations or epochs");
  }
  const uint32_t workers = spec.num_workers();
  if (workers > 0 && spec.global_batch_size() < workers) {
    return absl::InvalidArgumentError(absl::StrCat("global_batch_size: ", spec.global_batch_size(),
                                                   " is less than num_workers ", workers));
  }
  const proto::DataSpec& d = spec.data();
  switch (d.format()) {
    case proto::DATA_FORMAT_CRITEO_TSV:
    case proto::DATA_FORMAT_HERALD_BINARY:
      if (d.paths().empty()) return absl::InvalidArgumentError("data.paths: empty");
      break;
    case proto::DATA_FORMAT_GENERATED:
      if (d.generator().rows() == 0) {
        return absl::InvalidArgumentError("data.generator.rows: must be > 0");
      }
      break;
    default:
      return absl::InvalidArgumentError(
          "data.format: must be CRITEO_TSV, HERALD_BINARY or GENERATED");
  }
  if (!(d.eval_fraction() >= 0 && d.eval_fraction() < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.eval_fraction: ", d.eval_fraction(), " not in [0, 1)"));
  }
  HERALD_ASSIGN_OR_RETURN(Policy policy, PolicyOfSpec(spec));
  const proto::SchedulingSpec& s = spec.scheduling();
  if (policy.keep_cache && s.cache_rows_per_worker() == 0 &&
      !(s.cache_fraction() > 0 && s.cache_fraction() <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.cache_fraction: ", s.cache_fraction(),
                     " not in (0, 1] (or set scheduling.cache_rows_per_worker)"));
  }
  if (s.handoff() && policy.sync != SyncMode::kOwnership) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.handoff: policy ", policy.name,
                     " owns no rows, so none is ever handed off (want HERALD or HERALD_ADAPTIVE)"));
  }
  if (s.serve() && policy.sync != SyncMode::kOwnership) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scheduling.serve: policy ", policy.name,
        " owns no rows, so none is ever served by an owner (want HERALD or HERALD_ADAPTIVE)"));
  }
  if (s.allocation_passes() > kMaxAllocationPasses) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.allocation_passes: ", s.allocation_passes(), ", want 0..",
                     kMaxAllocationPasses));
  }
  if (s.allocation_passes() > 1 && policy.allocation != Allocation::kLocality) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scheduling.allocation_passes: ", s.allocation_passes(), " with policy ", policy.name,
        ", whose allocation is not location-aware (want HERALD or HERALD_ADAPTIVE)"));
  }
  if (s.cache_rows_per_worker() >= kMaxSlotsPerTable) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.cache_rows_per_worker: ", s.cache_rows_per_worker(), ", want < ",
                     kMaxSlotsPerTable, " (slots per worker and table)"));
  }
  if (policy.adaptive_tables) {
    if (s.adaptive_top_k() == 0 && !(s.adaptive_budget_ms() > 0)) {
      return absl::InvalidArgumentError(
          "scheduling: HERALD_ADAPTIVE needs adaptive_top_k > 0 or adaptive_budget_ms > 0");
    }
    if (s.adaptive_top_k() > static_cast<uint32_t>(spec.tables_size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("scheduling.adaptive_top_k: ", s.adaptive_top_k(), " for ",
                       spec.tables_size(), " tables"));
    }
    if (s.adaptive_budget_ms() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("scheduling.adaptive_budget_ms: ", s.adaptive_budget_ms(), ", want ≥ 0"));
    }
  } else if (s.adaptive_top_k() != 0 || s.adaptive_budget_ms() != 0) {
    return absl::InvalidArgumentError(
        "scheduling.adaptive_top_k / adaptive_budget_ms: set only with policy HERALD_ADAPTIVE");
  }
  if (s.warm_start() && !policy.keep_cache) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduling.warm_start: policy ", policy.name, " keeps no cache to warm"));
  }
  if (spec.checkpoint().every_iterations() > 0) {
    // Needs the workers' dirty rows flushed first (docs/checkpoints.md).
    return absl::UnimplementedError(
        "checkpoint.every_iterations: not built yet (set checkpoint.dir for a final checkpoint)");
  }
  return absl::OkStatus();
}

}  // namespace herald::scheduler
