#pragma once
// Scheduling policies as three independent choices, so the published
// breakdown (allocation alone, communication plan alone, both) is a policy.
//
//   nocache            contiguous split, every row fetched and every gradient
//                      pushed every iteration (nothing kept between iterations)
//   vanilla            random split, per-worker cache, every trained row
//                      synchronised through the PS each iteration (baseline)
//   herald             location-aware allocation + ownership with on-demand
//                      communication plans
//   herald-alloc-only  location-aware allocation, synchronisation as vanilla
//   herald-comm-only   random split, ownership + communication plans
//   herald-adaptive    herald, scoring only the k tables with the highest
//                      degree of infrequency (table_profiler.h)
//   het                random split, HET's bounded-staleness cache (not
//                      exact for staleness > 0; stale_copies.h)

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace herald::scheduler {

enum class Allocation {
  kContiguous,  // samples [B·w/W, B·(w+1)/W) to worker w
  kRandom,      // a seeded random equal split
  kLocality,    // greedy by transmission cost given the caches (allocator.h)
};

enum class SyncMode {
  kThroughPs,  // every trained row: gradients pushed, the PS holds the newest copy
  kOwnership,  // a row trained by one worker stays with it (dirty); rows trained
               // by several go through the PS; write-backs on demand
  kStale,      // HET (PlannerOptions::staleness): every worker trains its own
               // cached copy while the copy's clocks allow, holding its
               // gradients; they reach the PS when the copy is evicted or
               // invalidated. Staleness 0 plans exactly what kThroughPs does.
};

struct Policy {
  std::string name;
  Allocation allocation = Allocation::kRandom;
  SyncMode sync = SyncMode::kThroughPs;
  bool keep_cache = true;        // false: every row is evicted after its iteration
  bool adaptive_tables = false;  // kLocality scores the profiler's top-k tables
};

// Errors: InvalidArgument naming the value and the known policies.
absl::StatusOr<Policy> PolicyByName(const std::string& name);
std::vector<std::string> PolicyNames();

}  // namespace herald::scheduler
