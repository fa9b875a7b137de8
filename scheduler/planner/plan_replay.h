#pragma once
// An independent replay of plans, used by the simulator and tests to prove a
// policy's accounting: it executes each iteration's plans as the workers and
// PS shards would (evictions with write-back of dirty rows → fetches,
// initialisations and received rows → training → pushes and gradients to
// owners → write-backs → commit → hand-offs and served copies), tracks the
// true version of every cached row and where its newest copy is, and fails
// loudly on any plan under which a worker would train on an outdated row, a
// row's update would be lost (two owners, a dirty copy overwritten or
// dropped, gradients applied to an outdated PS copy, a gradient sent to a
// worker that does not own the row, a served copy trained as anything but
// remote), a fetch would race a write-back, a fetch marked early would read
// a PS copy an iteration its distance spans changed, a row some plan trained would be
// initialised, an expired row would stay cached or be written back, or the
// slots do not match the batch. It shares no state or
// code with the planner; the rows moved it counts are the figures the
// simulator reports.
//
// Not thread-safe. Memory: one entry per row some cache holds, and every
// key ever trained (the planner's own record of that is a fixed-size
// filter).

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

class PlanReplay {
 public:
  // slots: per table, every worker's slot array size.
  PlanReplay(uint32_t num_workers, std::vector<uint32_t> slots);

  // Replays `plan` (for `batch`) and fills counts[w] with what worker w
  // moved. Errors: FailedPrecondition describing the first violation
  // (iteration, worker, table, key, slot).
  absl::Status Check(const data::KeyBatch& batch, const IterationPlan& plan,
                     std::vector<PlanCounts>* counts);

  // After the last iteration: the PS holds every row's newest version.
  absl::Status CheckFinal() const;

 private:
  // kServed: a copy of a row another worker holds dirty, sent to be trained
  // with its gradients going to that worker.
  enum class State : uint8_t { kEmpty, kClean, kDirty, kStale, kServed };
  struct Copy {
    Key key = 0;
    State state = State::kEmpty;
    uint64_t version = 0;
  };
  using CacheTable = ModelledTable<Copy>;
  struct Truth {
    uint64_t version = 0;     // trainings since the entry was created
    uint64_t ps_version = 0;  // the PS copy's version
    uint32_t copies = 0;      // caches holding the row
  };

  // Row expiry, first: every cached copy of a key `batch` lists as expired
  // is dropped (no write-back), nothing else is, each expired key is in
  // exactly one worker's expire list, and none stays cached; its row is
  // then new (the PS deletes it at this commit: a fetch of it marked early
  // at the next iteration is a violation).
  absl::Status Expiries(const data::KeyBatch& batch, const IterationPlan& plan);
  absl::Status Evictions(uint32_t w, const IterationPlan& plan, std::vector<PlanCounts>* counts);
  absl::Status Fetches(uint32_t w, const IterationPlan& plan, std::vector<PlanCounts>* counts);
  // Rows the worker initialises: never trained by any plan so far.
  absl::Status Inits(uint32_t w, const IterationPlan& plan, std::vector<PlanCounts>* counts);
  absl::Status Training(const data::KeyBatch& batch, const IterationPlan& plan,
                        std::vector<PlanCounts>* counts);
  absl::Status WriteBacks(uint32_t w, const IterationPlan& plan, std::vector<PlanCounts>* counts);
  // Hand-offs and served copies: rows sent after the step (Sends) are in
  // transit until the receiver takes them in its next step's fetch phase
  // (Receives).
  absl::Status Sends(uint32_t w, const IterationPlan& plan, std::vector<PlanCounts>* counts);
  absl::Status Receives(uint32_t w, const IterationPlan& plan);
  // After every send: worker w's incoming lists name exactly what is sent to it.
  absl::Status Incoming(uint32_t w, const IterationPlan& plan) const;
  // Table t's gather lists of every owner equal, per sender, the sender's
  // remote list to it, and name the owner's slot of each key.
  absl::Status Gathers(uint32_t t, const IterationPlan& plan) const;
  absl::Status Drop(uint32_t w, uint32_t t, Key key);
  // After Landing: the PS's copy of `key` lands clean in worker w's `slot`
  // (fetched or initialised), once per iteration.
  absl::Status LandClean(uint32_t w, uint32_t t, uint32_t slot, Key key);
  // A row fetched or received into worker w's `slot`: in range, the slot
  // free or holding a clean or stale copy of the key, the key in no other slot.
  absl::Status Landing(uint32_t w, uint32_t t, const char* verb, uint32_t slot, Key key) const;
  absl::Status Violation(uint32_t w, uint32_t t, const std::string& what) const;

  uint32_t num_workers_;
  uint64_t iteration_ = 0;
  ModelledCaches<Copy> caches_;                         // [worker][table]
  std::vector<absl::flat_hash_map<Key, Truth>> truth_;  // [table]
  std::vector<absl::flat_hash_set<Key>> trained_ever_;  // [table] every key trained so far
  std::vector<absl::flat_hash_map<Key, uint32_t>> written_back_at_start_;  // [table] key -> worker
  std::vector<std::vector<absl::flat_hash_set<Key>>> fetched_;  // [worker][table], this iteration
  // [worker][table] rows handed off or served to the worker, in transit
  // (each counts as one of the row's copies until received).
  struct InTransit {
    uint64_t version = 0;
    bool served = false;
  };
  std::vector<std::vector<absl::flat_hash_map<Key, InTransit>>> in_transit_;
  // [worker][table] slots where served copies landed this iteration: each
  // must be trained.
  std::vector<std::vector<std::vector<uint32_t>>> served_landed_;
  // [receiver][table][sender]: how far Sends has matched the receiver's
  // incoming list against that sender's sends this iteration.
  std::vector<std::vector<std::vector<size_t>>> incoming_seen_;
  // Keys whose PS copy changed (gradients applied or written back) during
  // this iteration and the last ones.
  RecentPsChanges ps_changed_;
};

}  // namespace herald::scheduler
