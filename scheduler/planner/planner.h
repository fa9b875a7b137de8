#pragma once
// The embedding scheduler's core: for each global batch it decides which
// worker trains which sample (allocator.h) and emits, per worker and table,
// the cache operations in terms of slots (plan::TablePlan) and the slot of
// every sample's row (plan::TableSamples). It owns every worker's cache
// layout and knows where each cached row's newest version is (row_directory.h).
//
// Invariants of every emitted plan (checked independently by PlanReplay):
//  * a worker trains only rows whose newest version is in its cache when its
//    iteration starts (held dirty, fetched this iteration, or a copy nobody
//    changed since it was fetched);
//  * a row trained by one worker under SyncMode::kOwnership stays with it,
//    dirty; a row trained by several goes through the PS (gradients pushed),
//    or with options.serve, when one of them holds it dirty, stays with
//    that one, which gathers the others' gradients;
//  * after iteration t, a worker writes back exactly the dirty rows that
//    another worker trains at t + 1 (the communication plan; with hand-offs
//    or serving some go to the other workers directly instead), and at the
//    last iteration every dirty row;
//  * an evicted dirty row is written back first; a plan never evicts a row it
//    trains in the same iteration; a dirty row is never overwritten;
//  * fetch.early[i] = d, the row's early distance: no plan of iterations
//    t - d .. t - 1 changed its PS copy (at most kMaxEarlyDistance), so the
//    fetch may be issued once t - d - 1 committed, before the later commits;
//  * with options.init_on_worker, a row is initialised by its worker
//    instead of fetched only if no earlier plan trained it;
//  * the rows a batch lists as expired (KeyBatch::Table::expired; none of
//    them is in the batch) leave every cache first, unwritten, and each is
//    in exactly one worker's expire list; the next iteration's fetch of
//    such a key is not early;
//  * under SyncMode::kStale (policy het) the first invariant is HET's
//    instead: a worker trains only copies valid under its staleness bound
//    (stale_copies.h), and a held gradient reaches the PS before its copy
//    is overwritten, and every one by the last iteration
//    (StalenessChecker checks these).
//
// Not thread-safe (one caller at a time; with options.threads > 1 it runs
// tables on its own threads during Plan). Memory: the caches' size plus one
// batch index per batch in flight, and with init_on_worker one fixed-size
// filter per table; independent of the dataset.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/key_batch.h"
#include "common/rng.h"
#include "plan/step.h"
#include "scheduler/planner/allocator.h"
#include "scheduler/planner/batch_index.h"
#include "scheduler/planner/cache_layout.h"
#include "scheduler/planner/eviction_order.h"
#include "scheduler/planner/policy.h"
#include "scheduler/planner/row_directory.h"
#include "scheduler/planner/stale_copies.h"
#include "scheduler/planner/table_profiler.h"
#include "scheduler/planner/table_runner.h"
#include "scheduler/planner/trained_filter.h"

namespace herald::scheduler {

// Slots per worker and table, exclusive (the LRU order keeps a slot's use
// number, list and dirty flag in 32 bits: use numbers below 2^29).
constexpr uint32_t kMaxSlotsPerTable = uint32_t{1} << 28;
// PlannerOptions::allocation_passes is 1..kMaxAllocationPasses.
constexpr uint32_t kMaxAllocationPasses = 8;

struct PlannerOptions {
  Policy policy;
  uint32_t num_workers = 1;
  // Per table: rows a worker's cache keeps between iterations.
  std::vector<uint32_t> capacity;
  // Per table: the worker's slot array size, ≥ capacity. An iteration may
  // need more rows than `capacity` (they stay until evicted); it fails with
  // ResourceExhausted only when they do not fit `slots`.
  std::vector<uint32_t> slots;
  EvictionKind eviction = EvictionKind::kLru;
  uint64_t seed = 1;  // tie-breaks and random splits
  // herald-adaptive (policy.adaptive_tables): the tables scored and the
  // budget. Needs top_k > 0 or budget_ms > 0.
  AdaptiveOptions adaptive;
  // Frequency-aware warm start: per table, keys hottest first (e.g. from
  // `heraldctl data stats`). Iteration 0's plan also fetches, into every
  // worker's cache, the hottest keys that worker does not train at
  // iteration 0, as many as its capacity leaves room for after the rows it
  // does train (so none is evicted in the same plan). Empty: no warm start.
  std::vector<std::vector<Key>> warm_keys;
  // Threads planning tables at once (1..64; the calling thread counts as
  // one). Plans are the same bits for any value; only allocation and the
  // adaptive profiler stay on the calling thread.
  uint32_t threads = 1;
  // Worker-to-worker hand-offs (job spec scheduling.handoff, heraldctl
  // simulate --handoff): a row one worker
  // holds dirty that exactly one other worker trains next goes from the one
  // to the other directly (TablePlan send, incoming, then receive
  // in the next plan) instead of a write-back
  // to the PS and a fetch. Needs a policy whose rows can be owned.
  bool handoff = false;
  // Rows served by their owner (job spec scheduling.serve, heraldctl
  // simulate --serve): a row one worker holds dirty that several workers,
  // itself among them, train next stays its own: it sends the others a copy
  // after the step (TablePlan send with served flags), they train on it and
  // send it their gradients (remote), and it applies the rank-ordered sum
  // (gather, owned_slots) — no write-back, no fetch, no push to the PS.
  // Needs a policy whose rows can be owned.
  bool serve = false;
  // Rows never trained are initialised by the workers (TablePlan init,
  // math::InitialRow: what the PS would return) instead of fetched; job spec
  // scheduling.init_on_worker, heraldctl simulate --init-on-worker. Any
  // policy. Which keys may have been trained is kept in one TrainedFilter per
  // table of `trained_filter_bits` bits (a power of two ≥ 64): a false
  // positive only costs a fetch. Valid only for jobs whose PS tables start
  // empty (no restored checkpoint).
  bool init_on_worker = false;
  uint64_t trained_filter_bits = uint64_t{1} << 23;
  // Greedy passes of location-aware allocation (1..8; job spec
  // scheduling.allocation_passes, heraldctl simulate --allocation-passes):
  // each pass after the first re-places every sample knowing where the
  // others went (allocator.h). More passes move fewer rows and take longer.
  uint32_t allocation_passes = 1;
  // Every `p` iterations for each period p here (0s ignored), the
  // iteration's plan writes back every row a worker holds dirty instead of
  // planning hand-offs and serving for the next (the caches keep clean
  // copies): once that iteration commits, the PS holds the whole model,
  // which a consistent checkpoint captures and an evaluation reads (job
  // spec checkpoint.every_iterations, eval.every_iterations). Iteration i
  // flushes when (i + 1) % p == 0 for some p; the last iteration always does.
  std::vector<uint64_t> flush_every;
  // Iteration i also flushes so when batch i + 1 starts files of a followed
  // directory (KeyBatch::files_started), so that they are scored by the
  // model as it stands before they train (job spec eval.each_file).
  bool flush_before_new_files = false;
  // The first iteration planned (a job resumed from a checkpoint of
  // iteration first_iteration - 1); plans and steps are numbered from it.
  uint64_t first_iteration = 0;
  // HET's staleness threshold s (SyncMode::kStale only; 0..kMaxStaleness,
  // stale_copies.h; job spec scheduling.staleness). 0 plans exactly what
  // vanilla does.
  uint32_t staleness = 0;
};

// Whether iteration `iteration` ends with every dirty row written back
// under periods `flush_every` (PlannerOptions::flush_every; the last
// iteration also does).
inline bool FlushesAt(uint64_t flush_every, uint64_t iteration) {
  return flush_every > 0 && (iteration + 1) % flush_every == 0;
}
inline bool FlushesAt(const std::vector<uint64_t>& flush_every, uint64_t iteration) {
  for (uint64_t p : flush_every) {
    if (FlushesAt(p, iteration)) return true;
  }
  return false;
}

// Rows one worker moves in one iteration. uses: distinct rows it trains;
// hits: of those, the ones already newest in its cache.
struct PlanCounts {
  uint64_t uses = 0;
  uint64_t hits = 0;
  uint64_t fetched = 0;
  uint64_t pushed = 0;        // gradients of shared rows
  uint64_t written_back = 0;  // dirty evictions + communication plan + final flush
  // Of the rows the communication plan moves from their dirty holder, those
  // exactly one other worker trains next: without hand-offs they are
  // written back (and fetched again), with them they are `transferred`.
  uint64_t handoffs = 0;
  // Rows this worker sent to another: hand-offs, served copies and
  // gradients sent to a row's owner (the last two also counted below).
  uint64_t transferred = 0;
  uint64_t served_copies = 0;    // copies of its dirty rows sent to their other trainers
  uint64_t owner_gradients = 0;  // gradients sent to a row's owner instead of the PS
  uint64_t initialized = 0;      // rows never trained, initialised instead of fetched

  PlanCounts& operator+=(const PlanCounts& o) {
    uses += o.uses;
    hits += o.hits;
    fetched += o.fetched;
    pushed += o.pushed;
    written_back += o.written_back;
    handoffs += o.handoffs;
    transferred += o.transferred;
    served_copies += o.served_copies;
    owner_gradients += o.owner_gradients;
    initialized += o.initialized;
    return *this;
  }
};

struct WorkerPlan {
  std::vector<uint32_t> samples;          // indices into the global batch, increasing
  std::vector<plan::TablePlan> tables;    // one per table
  std::vector<plan::TableSamples> slots;  // one per table, CSR over `samples`
  PlanCounts counts;
};

struct IterationPlan {
  uint64_t iteration = 0;
  bool last = false;  // every dirty row is written back after this iteration
  std::vector<WorkerPlan> workers;
};

class Planner {
 public:
  // REQUIRES: the policy's options are consistent with the policy (handoff,
  // serve and warm keys only where it can, more than one allocation pass
  // only with location-aware allocation, herald-adaptive's top_k or budget):
  // ValidateSchedulingSpec (scheduling_spec.h) checks them once, and
  // PlannerOptionsFromSpec builds options that pass it.
  // Errors: InvalidArgument naming the option for sizes and ranges.
  static absl::StatusOr<std::unique_ptr<Planner>> Create(PlannerOptions options);

  // Plans the next iteration for `batch`. `next` is the following global
  // batch (the read-ahead the communication plan needs), or nullptr when
  // `batch` is the last. The batch passed here must be the `next` of the
  // previous call. Errors: InvalidArgument (batch shape), ResourceExhausted
  // (a worker's rows of one iteration do not fit its slots), Internal (a
  // broken invariant: a planner bug).
  absl::StatusOr<IterationPlan> Plan(const data::KeyBatch& batch, const data::KeyBatch* next);
  // The same, written into `plan`, whose lists are emptied first but keep
  // their memory: a caller planning iteration after iteration into one
  // IterationPlan allocates nothing per iteration once the lists have grown.
  // On error `plan` holds no valid plan.
  //
  // Errors found before the planner's state changes (the batch shapes and
  // sizes above) leave the planner as it was; after any other error every
  // later call fails with FailedPrecondition quoting it, as the caches and
  // directory may be half updated.
  absl::Status PlanInto(const data::KeyBatch& batch, const data::KeyBatch* next,
                        IterationPlan* plan) {
    return PlanInto(batch, next, nullptr, plan);
  }
  // The same, given the batch after `next` too (a read-ahead of two
  // batches, nullptr when there is none): its index is built beside the
  // serial part of `next`'s allocation, so it costs that much less when
  // `next` is planned. The plans are the same bits either way. REQUIRES:
  // `next` is not nullptr when `after_next` is not. The `next` given here
  // must be the `after_next` of the previous call when that gave one.
  absl::Status PlanInto(const data::KeyBatch& batch, const data::KeyBatch* next,
                        const data::KeyBatch* after_next, IterationPlan* plan);

  // An independent planner in the same state (the exhaustive search explores
  // allocations from copies).
  std::unique_ptr<Planner> Clone() const { return std::unique_ptr<Planner>(new Planner(*this)); }

  // The planner's whole state between two plans, as bytes (a checkpoint's
  // planner file, planner_state.cc): every worker's cache with its eviction
  // order, the row directories, the read-ahead batches' indexes and
  // allocation, the trained-row filters and herald-adaptive's profiler,
  // with the options that shape them. In this machine's byte order (the
  // bytes record it). REQUIRES: no forced allocation queued.
  // Errors: FailedPrecondition for a planner stopped by an error.
  absl::StatusOr<std::string> SaveState() const;
  // A planner with `options` in the state `bytes` were saved in: it plans
  // what the saved planner would have, bit for bit, given the batches that
  // planner would have been given next. Errors: InvalidArgument naming the
  // option when `options` differ from the saved planner's in one that shapes
  // its state (options.threads may differ) or when options.first_iteration
  // is not the iteration it plans next; DataLoss naming the field for bytes
  // that are not a planner's state (truncated, another version or byte
  // order, sizes that do not fit the options). Bytes that pass these checks
  // are trusted: the checkpoint's checksum is what guards against damage.
  static absl::StatusOr<std::unique_ptr<Planner>> LoadState(PlannerOptions options,
                                                            std::string_view bytes);

  // The next batch this planner allocates (the first batch, then each
  // read-ahead batch in order) is given `worker_of` (worker of each sample)
  // instead of the policy's allocation. Several calls queue in order. Plan
  // fails with InvalidArgument when a forced allocation does not fit its batch.
  void ForceAllocation(std::vector<uint32_t> worker_of) { forced_.push_back(std::move(worker_of)); }

  // With options.serve, the owner of a row several workers (`users`, not
  // empty) train while the PS holds it: a member picked by a hash of the
  // key, so ownership spreads evenly over the workers.
  static uint32_t PickOwner(const WorkerSet& users, Key key) {
    return users.Nth(static_cast<uint32_t>(Mix64(key) % users.Count()));
  }

  uint64_t iteration() const { return iteration_; }
  // Calls fn(slot, key) for every row worker `w`'s cache holds in table `t`
  // now (between two plans), in slot order: the contents the worker's own
  // cache mirrors.
  template <typename Fn>
  void ForEachCachedRow(uint32_t w, uint32_t t, Fn fn) const {
    const CacheLayout& cache = caches_[w][t];
    cache.ForEachResident(
        [&](uint32_t slot) { fn(slot, directory_[t].at(cache.RowAt(slot)).key); });
  }
  // herald-adaptive's profiler (the tables scored, their DoI); null for
  // other policies.
  const TableProfiler* profiler() const { return profiler_ ? &*profiler_ : nullptr; }
  const PlannerOptions& options() const { return options_; }
  // Row-directory entries over all tables: rows some cache holds, rows of
  // the batches in flight (two, three when reading two ahead), rows whose
  // PS copy changed in the last plan.
  // Bounded by the caches and batches, whatever the dataset.
  size_t directory_entries() const {
    size_t n = 0;
    for (const RowDirectory& dir : directory_) n += dir.size();
    return n;
  }

 private:
  explicit Planner(PlannerOptions options);
  Planner(const Planner&) = default;

  // The policy's allocation of `index`, or the next forced one. `side` runs
  // beside the allocation's serial part (Allocator::Allocate) and is done
  // on return.
  absl::Status Allocate(const BatchIndex& index, CounterRng* rng, std::vector<uint32_t>* worker_of,
                        const TableRunner::SideWork& side = {});

  // Per id of `index`: the workers training it, and the one worker that
  // does or kSeveral (the common questions, without reading the set). Per
  // worker and table: the ids it trains, in first-use order.
  static constexpr uint32_t kSeveral = UINT32_MAX;
  void ComputeUsers(const BatchIndex& index, const std::vector<uint32_t>& worker_of,
                    std::vector<WorkerSet>* users, std::vector<uint32_t>* sole,
                    std::vector<std::vector<std::vector<uint32_t>>>* needed);
  // PlanInto once the batches passed validation.
  absl::Status PlanValidated(const data::KeyBatch& batch, const data::KeyBatch* next,
                             const data::KeyBatch* after_next, IterationPlan* plan);
  absl::Status PlanTable(uint32_t t, uint32_t w, IterationPlan* plan);
  // Row `id` of the current batch is served by its holder this iteration:
  // several workers train it while one of them holds it dirty (only with
  // options.serve; the communication plan made it so).
  bool IsServed(const RowState& row, uint32_t id) const {
    return options_.serve && row.holder != kPsHolder && sole_[id] == kSeveral;
  }
  // With options.serve, the worker that applies the gradients of row `id`,
  // which several workers train this iteration: its holder, or, when the PS
  // holds it, one of them picked by the key (PickOwner).
  uint32_t OwnerOf(const RowState& row, uint32_t id) const {
    return row.holder != kPsHolder ? static_cast<uint32_t>(row.holder)
                                   : PickOwner(users_[id], row.key);
  }
  // After every worker's PlanTable for table t: the owners' gather lists,
  // from the remote rows in remote_ids_[t].
  void GatherLists(uint32_t t, IterationPlan* plan);
  void ApplyTraining(uint32_t t);
  // Counts go to table_counts_[t][w] (tables run on several threads).
  void Evict(uint32_t t, uint32_t w, uint32_t slot, WorkerPlan* plan);
  // Row expiry: table t's rows of `expired` leave every cache without a
  // write-back (TablePlan::drop) and go to one worker's TablePlan::expire
  // each, for the PS to delete at this iteration's commit; the PS copy
  // counts as changed now, so the next iteration fetches them late.
  void ExpireRows(uint32_t t, const std::vector<Key>& expired, IterationPlan* plan);
  void WriteBack(RowState* row, PlanCounts* counts);
  void CommunicationPlan(IterationPlan* plan);
  // Policy het, after the plan's training: the held copies their workers
  // read in the read-ahead batch and that the committed clocks invalidate
  // are flushed now, so that batch's fetches see their updates.
  void StaleFlushes(IterationPlan* plan);
  void FlushHeld(uint32_t t, uint32_t w, uint32_t slot, WorkerPlan* wp);
  void FlushDirty(IterationPlan* plan);
  // Adds table_counts_ into each worker's plan counts.
  void MergeCounts(IterationPlan* plan);
  // The worker's per-sample slot lists of table t (plan->slots[t]), from
  // slot_of_id_, which holds that worker's slots: call it right after the
  // worker's PlanTable(t, ...).
  void FillSampleSlots(uint32_t t, WorkerPlan* plan);
  void WarmStart(IterationPlan* plan);

  PlannerOptions options_;
  uint32_t num_tables_;
  TableRunner run_;
  uint64_t iteration_ = 0;
  absl::Status failed_;  // the error that stopped the planner, if one did
  Allocator allocator_;
  std::vector<std::vector<CacheLayout>> caches_;  // [worker][table]
  std::vector<RowDirectory> directory_;           // [table]

  // The batch being planned and the read-ahead batch, with their allocation,
  // and the batch after that when the caller gave it (indexed, not yet
  // allocated).
  BatchIndex current_, next_, after_;
  std::vector<uint32_t> worker_of_, next_worker_of_;
  bool have_next_ = false;
  bool have_after_ = false;
  std::deque<std::vector<uint32_t>> forced_;
  std::optional<TableProfiler> profiler_;

  // Per-iteration scratch.
  std::vector<WorkerSet> users_, next_users_;                             // per batch-local id
  std::vector<uint32_t> sole_, next_sole_;                                // per batch-local id
  std::vector<std::vector<std::vector<uint32_t>>> needed_, next_needed_;  // [worker][table] ids
  // next_users_/next_sole_/next_needed_ hold the read-ahead batch's (the communication
  // plan computed them), so they need not be computed again.
  bool next_users_ready_ = false;
  std::vector<uint32_t> slot_of_id_;
  std::vector<std::vector<uint32_t>> missing_;  // [table]
  std::vector<std::vector<uint32_t>> victims_;  // [table]
  // [table] (worker, id) of every remote row, in planning order.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> remote_ids_;
  std::vector<std::vector<PlanCounts>> table_counts_;  // [table][worker]
  std::vector<TrainedFilter> trained_;                 // [table]; empty unless init_on_worker
  std::vector<StaleCopies> stale_;                     // [table]; empty unless policy het
  // [table] rows whose held gradients or write the plan pushes (het),
  // marked changed at the PS once every worker's fetches are planned.
  std::vector<std::vector<uint32_t>> stale_pushed_;
};

}  // namespace herald::scheduler
