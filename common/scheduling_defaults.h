#pragma once
// The defaults of a job's scheduling options, by policy: what a job gets
// when its spec leaves scheduling.handoff, serve, init_on_worker or
// allocation_passes unset. Chosen from the end-to-end measurements on the
// emulated cluster (docs/benchmarks.md, "End to end across hosts"): with the
// herald policies every exact option on was the fastest configuration at
// both link speeds measured. The baselines (nocache, vanilla) keep the
// published vanilla's behaviour.
//
// Both the scheduler (planning) and the worker (setting up the row
// exchange) read the options through this one function, so they agree.

#include "proto/job.pb.h"

namespace herald {

// Fills every unset option of `scheduling` with its policy's default:
//   handoff, serve, init_on_worker: true for herald, herald-adaptive and
//     herald-comm-only (the policies that own rows; init_on_worker also
//     for herald-alloc-only), false for nocache and vanilla;
//   allocation_passes 0: 2 for herald, herald-adaptive and
//     herald-alloc-only (location-aware allocation), else 1.
// Options already set are kept (a spec may turn any of them off).
void ResolveSchedulingDefaults(proto::SchedulingSpec* scheduling);

}  // namespace herald
