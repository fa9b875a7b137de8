#pragma once
// The one encoder and decoder of the cache plan: plan::TablePlan ⇄
// proto::CachePlan (proto/plan.proto).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "plan/table_plan.h"
#include "proto/plan.pb.h"

namespace herald::plan {

// Appends one proto::TablePlan per entry of `tables` (table_id = index).
void EncodeCachePlan(const std::vector<TablePlan>& tables, proto::CachePlan* out);

// One TablePlan per table of the job (tables the wire omits have no
// operation). Checks every byte length and, per table, CheckShape.
// Errors: InvalidArgument naming the field, e.g.
// "plan.tables[2].send.peers has 2 entries but send.keys has 3".
absl::StatusOr<std::vector<TablePlan>> DecodeCachePlan(const proto::CachePlan& in,
                                                       uint32_t num_tables);

}  // namespace herald::plan
