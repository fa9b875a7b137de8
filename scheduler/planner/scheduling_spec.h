#pragma once
// The one path from a job spec's scheduling section (proto::SchedulingSpec,
// proto/job.proto) to the planner's options: the job's scheduler, `heraldctl
// simulate` (which builds a SchedulingSpec from its flags) and the
// scheduler benchmark all go through PlannerOptionsFromSpec, and every
// scheduling field is validated once, here.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/ids.h"
#include "proto/job.pb.h"
#include "scheduler/planner/planner.h"
#include "scheduler/planner/policy.h"

namespace herald::scheduler {

// The planner policy of the spec (UNSPECIFIED means herald), with het's
// allocation as scheduling.allocation chooses. Errors: InvalidArgument for
// an unknown value, or an allocation choice with another policy.
absl::StatusOr<Policy> PolicyOfSpec(const proto::SchedulingSpec& scheduling);

// The spec's policy of a policy's name (policy.h: "herald", "vanilla", ...),
// for tools that take names. Errors: InvalidArgument listing the names.
absl::StatusOr<proto::PolicyKind> PolicyKindByName(const std::string& name);

// Every field of the scheduling section against its range and the policy.
// `num_tables`: the job's tables (adaptive_top_k may not exceed it).
// Errors: InvalidArgument naming the field, e.g. "scheduling.handoff: policy
// vanilla owns no rows, so none is ever handed off (...)".
absl::Status ValidateSchedulingSpec(const proto::SchedulingSpec& scheduling, uint32_t num_tables);

// What the scheduling section leaves to the job's size, its data and the
// scheduler's own flags.
struct PlannerResources {
  uint32_t num_workers = 1;
  std::vector<uint32_t> capacity;           // per table
  std::vector<uint32_t> slots;              // per table
  std::vector<std::vector<Key>> warm_keys;  // per table, hottest first (warm_start)
  uint64_t seed = 1;                        // the job's seed
  uint32_t threads = 1;                     // planner threads
  std::vector<uint64_t> flush_every;        // PlannerOptions::flush_every (checkpoints, evals)
  bool flush_before_new_files = false;  // PlannerOptions::flush_before_new_files (eval.each_file)
};

// Fills the unset options of `scheduling` with their policy's defaults
// (common/scheduling_defaults.h), validates it (ValidateSchedulingSpec) and
// fills every PlannerOptions field from it and `resources`.
absl::StatusOr<PlannerOptions> PlannerOptionsFromSpec(const proto::SchedulingSpec& scheduling,
                                                      PlannerResources resources);

}  // namespace herald::scheduler
