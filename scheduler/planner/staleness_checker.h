#pragma once
// The independent replay of policy het's plans (SyncMode::kStale), the
// counterpart of PlanReplay for a policy that is not exact: instead of
// proving that every worker trains the newest version of every row, it
// proves HET's bound. It keeps its own clocks (HET's Lamport clocks, in
// absolute numbers: the global clock of every row ever pushed, the start
// and current clock of every cached copy) and executes each plan as the
// workers and the PS would, failing loudly when
//  * a worker reads a copy past the bound: its current clock more than s
//    ahead of its start clock, or the global clock more than s ahead of it
//    (HET's CheckValid), or a copy whose gradients already went to the PS;
//  * a held write is lost: a held copy overwritten by a fetch, or held
//    gradients left in a cache after the last iteration (CheckFinal);
//  * a write is held past the bound (it must be pushed instead);
//  * a fetch marked early reads a row an iteration its distance spans
//    pushed to;
//  * a row some plan trained is initialised, a list het never uses is not
//    empty, or the slots do not match the batch.
// It shares no state or code with the planner; the rows moved it counts
// are the figures the simulator reports for het.
//
// Not thread-safe. Memory: one entry per cache slot, one clock per row
// ever pushed and every key ever trained.

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "common/data/key_batch.h"
#include "common/ids.h"
#include "scheduler/planner/modelled_caches.h"
#include "scheduler/planner/planner.h"
#include "scheduler/planner/recent_ps_changes.h"

namespace herald::scheduler {

class StalenessChecker {
 public:
  // slots: per table, every worker's slot array size; staleness: HET's s.
  StalenessChecker(uint32_t num_workers, std::vector<uint32_t> slots, uint32_t staleness);

  // Replays `plan` (for `batch`) and fills counts[w] with what worker w
  // moved. Errors: FailedPrecondition describing the first violation
  // (iteration, worker, table, key, slot).
  absl::Status Check(const data::KeyBatch& batch, const IterationPlan& plan,
                     std::vector<PlanCounts>* counts);

  // After the last iteration: no cache holds a gradient the PS has not seen.
  absl::Status CheckFinal() const;

  // The largest number of clocks any read so far was behind the global
  // clock (≤ staleness once Check passed).
  uint64_t max_behind() const { return max_behind_; }

 private:
  enum class State : uint8_t { kEmpty, kClean, kHeld, kOutdated };
  struct Copy {
    Key key = 0;
    State state = State::kEmpty;
    uint64_t start = 0, current = 0;
  };
  using Cache = ModelledTable<Copy>;

  absl::Status Violation(uint32_t w, uint32_t t, const std::string& what) const;
  absl::Status Land(uint32_t w, uint32_t t, const char* verb, uint32_t slot, Key key);
  // Worker w's lists of table t in execution order: evictions, fetches,
  // initialisations, training (reads, holds, pushes), flushes.
  absl::Status Lists(uint32_t w, uint32_t t, const data::KeyBatch& batch, const IterationPlan& plan,
                     PlanCounts* counts);
  // `landed`: the slots fetched or initialised this iteration.
  absl::Status Training(uint32_t w, uint32_t t, const data::KeyBatch& batch,
                        const IterationPlan& plan, const absl::flat_hash_set<uint32_t>& landed,
                        PlanCounts* counts);
  void Push(uint32_t t, Key key, uint64_t clock);
  uint64_t Global(uint32_t t, Key key) const {
    auto it = global_[t].find(key);
    return it == global_[t].end() ? 0 : it->second;
  }

  uint32_t num_workers_;
  uint64_t staleness_;
  uint64_t iteration_ = 0;
  uint64_t max_behind_ = 0;
  ModelledCaches<Copy> caches_;                              // [worker][table]
  std::vector<absl::flat_hash_map<Key, uint64_t>> global_;   // [table] committed c_g
  std::vector<absl::flat_hash_map<Key, uint64_t>> pending_;  // [table] pushed this iteration
  RecentPsChanges pushed_;  // keys pushed this iteration and the last ones
  std::vector<absl::flat_hash_set<Key>> trained_ever_;  // [table] before this iteration
  std::vector<std::vector<Key>> trained_now_;           // [table] this iteration
};

}  // namespace herald::scheduler
