#pragma once
// A 64-bit digest (FNV-1a) of everything an iteration's plan tells the
// workers: each worker's sample indices, sample slots and every list of its
// cache plan, in a fixed order. Two runs whose digests differ made different
// plans; `heraldctl simulate` prints the digest over all iterations so that
// a change can be shown to leave every plan as it was. The column order is
// fixed (plan_digest.cc) so that digests stay comparable across changes of
// the plan types: a new kind of operation is folded in after the others.

#include <cstdint>

#include "scheduler/planner/planner.h"

namespace herald::scheduler {

inline constexpr uint64_t kPlanDigestSeed = 0xcbf29ce484222325ull;  // FNV-1a offset basis

// Folds `plan` into `digest` (start from kPlanDigestSeed).
uint64_t PlanDigest(const IterationPlan& plan, uint64_t digest);

}  // namespace herald::scheduler
