#include "scheduler/planner/planner.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace herald::scheduler {
namespace {

// How many directory entries ahead the per-row loops prefetch.
constexpr uint32_t kRowLookahead = 8;
// ComputeUsers' sole user of an id no sample has used yet.
constexpr uint32_t kNoUser = UINT32_MAX - 1;
// slot_of_id_ of a row not in the worker's cache yet.
constexpr uint32_t kNoSlot = UINT32_MAX;

// The worker's samples' per-feature lengths and per-key weights, in its
// sample order, beside the slots FillSampleSlots listed (a table several
// features look up has lengths; data with per-id weights has weights).
void CopyLengthsAndWeights(const data::KeyBatch::Table& table, const std::vector<uint32_t>& samples,
                           plan::TableSamples* out) {
  out->weights.clear();
  if (!table.weights.empty()) {
    out->weights.reserve(out->slots.size());
    for (uint32_t s : samples) {
      out->weights.insert(out->weights.end(), table.weights.begin() + table.offsets[s],
                          table.weights.begin() + table.offsets[s + 1]);
    }
  }
  out->features = table.features;
  out->feature_lengths.clear();
  if (table.features < 2) return;
  out->feature_lengths.reserve(samples.size() * table.features);
  for (uint32_t s : samples) {
    const auto first = table.feature_lengths.begin() + size_t{s} * table.features;
    out->feature_lengths.insert(out->feature_lengths.end(), first, first + table.features);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Planner>> Planner::Create(PlannerOptions options) {
  if (options.num_workers == 0 || options.num_workers > WorkerSet::kMaxWorkers) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_workers: ", options.num_workers, ", want 1..", WorkerSet::kMaxWorkers));
  }
  if (options.threads == 0 || options.threads > 64) {
    return absl::InvalidArgumentError(absl::StrCat("threads: ", options.threads, ", want 1..64"));
  }
  if (options.capacity.empty()) {
    return absl::InvalidArgumentError("capacity: one entry per table needed, got none");
  }
  if (options.slots.size() != options.capacity.size()) {
    return absl::InvalidArgumentError(absl::StrCat("slots: ", options.slots.size(), " entries for ",
                                                   options.capacity.size(), " tables"));
  }
  for (size_t t = 0; t < options.slots.size(); ++t) {
    if (options.slots[t] == 0 || options.slots[t] < options.capacity[t]) {
      return absl::InvalidArgumentError(absl::StrCat("slots[", t, "]: ", options.slots[t],
                                                     ", want ≥ max(1, capacity ",
                                                     options.capacity[t], ")"));
    }
    if (options.slots[t] >= kMaxSlotsPerTable) {
      return absl::InvalidArgumentError(
          absl::StrCat("slots[", t, "]: ", options.slots[t], ", want < ", kMaxSlotsPerTable));
    }
  }
  if (!options.warm_keys.empty() && options.warm_keys.size() != options.capacity.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "warm_keys: ", options.warm_keys.size(), " tables, the planner ", options.capacity.size()));
  }
  if (options.allocation_passes < 1 || options.allocation_passes > kMaxAllocationPasses) {
    return absl::InvalidArgumentError(absl::StrCat("allocation_passes: ", options.allocation_passes,
                                                   ", want 1..", kMaxAllocationPasses));
  }
  if (options.init_on_worker &&
      (options.trained_filter_bits < 64 ||
       (options.trained_filter_bits & (options.trained_filter_bits - 1)) != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trained_filter_bits: ", options.trained_filter_bits, ", want a power of two ≥ 64"));
  }
  if (options.staleness > kMaxStaleness) {
    return absl::InvalidArgumentError(
        absl::StrCat("staleness: ", options.staleness, ", want 0..", kMaxStaleness));
  }
  if (options.staleness != 0 && options.policy.sync != SyncMode::kStale) {
    return absl::InvalidArgumentError(absl::StrCat("staleness: ", options.staleness,
                                                   " with policy ", options.policy.name,
                                                   ", want 0 (het only)"));
  }
  if (options.policy.sync == SyncMode::kStale && (options.handoff || options.serve)) {
    return absl::InvalidArgumentError(
        "handoff / serve: policy het owns no rows to hand off or serve");
  }
  if (options.policy.adaptive_tables) {
    const AdaptiveOptions& a = options.adaptive;
    if (a.top_k == 0 && !(a.budget_ms > 0)) {
      return absl::InvalidArgumentError(
          "adaptive: herald-adaptive needs top_k > 0 or budget_ms > 0");
    }
    if (a.profile_every == 0) {
      return absl::InvalidArgumentError("adaptive.profile_every: 0, want ≥ 1");
    }
    if (a.sketch_width == 0 || (a.sketch_width & (a.sketch_width - 1)) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("adaptive.sketch_width: ", a.sketch_width, ", want a power of two"));
    }
  }
  return std::unique_ptr<Planner>(new Planner(std::move(options)));
}

Planner::Planner(PlannerOptions options)
    : options_(std::move(options)),
      num_tables_(static_cast<uint32_t>(options_.capacity.size())),
      run_(options_.threads),
      allocator_(options_.policy.allocation, options_.policy.sync, options_.num_workers,
                 options_.allocation_passes),
      directory_(num_tables_, RowDirectory(options_.num_workers)),
      needed_(options_.num_workers, std::vector<std::vector<uint32_t>>(num_tables_)),
      missing_(num_tables_),
      victims_(num_tables_),
      remote_ids_(num_tables_),
      table_counts_(num_tables_, std::vector<PlanCounts>(options_.num_workers)) {
  iteration_ = options_.first_iteration;
  if (options_.init_on_worker) {
    trained_.assign(num_tables_, TrainedFilter(options_.trained_filter_bits));
  }
  if (options_.policy.adaptive_tables) {
    profiler_.emplace(num_tables_, options_.num_workers, options_.adaptive);
  }
  if (options_.policy.sync == SyncMode::kStale) {
    for (uint32_t t = 0; t < num_tables_; ++t) {
      stale_.emplace_back(options_.num_workers, options_.slots[t], options_.staleness);
    }
    stale_pushed_.resize(num_tables_);
  }
  caches_.resize(options_.num_workers);
  for (auto& tables : caches_) {
    for (uint32_t t = 0; t < num_tables_; ++t) {
      tables.emplace_back(options_.slots[t], options_.eviction);
    }
  }
}

void Planner::ComputeUsers(const BatchIndex& index, const std::vector<uint32_t>& worker_of,
                           std::vector<WorkerSet>* users, std::vector<uint32_t>* sole,
                           std::vector<std::vector<std::vector<uint32_t>>>* needed) {
  users->resize(index.num_ids());
  sole->resize(index.num_ids());
  needed->resize(options_.num_workers);
  for (auto& tables : *needed) tables.resize(num_tables_);
  run_.ForEachTable(index.num_tables(), [&](uint32_t t) {
    std::fill(users->begin() + index.begin(t), users->begin() + index.begin(t + 1), WorkerSet());
    std::fill(sole->begin() + index.begin(t), sole->begin() + index.begin(t + 1), kNoUser);
    for (auto& tables : *needed) tables[t].clear();
    // Raw pointers: the stores below could alias the vectors' own fields,
    // which would make the compiler reload them on every use.
    const uint32_t* offsets = index.offsets(t).data();
    const uint32_t* ids = index.ids(t).data();
    const uint32_t* worker = worker_of.data();
    WorkerSet* set = users->data();
    uint32_t* only = sole->data();
    for (uint32_t s = 0, n = index.num_samples(); s < n; ++s) {
      const uint32_t w = worker[s];
      for (uint32_t i = offsets[s], end = offsets[s + 1]; i < end; ++i) {
        const uint32_t id = ids[i];
        if (set[id].Has(w)) continue;
        only[id] = only[id] == kNoUser ? w : kSeveral;
        set[id].Add(w);
        (*needed)[w][t].push_back(id);
      }
    }
  });
}

absl::Status Planner::Allocate(const BatchIndex& index, CounterRng* rng,
                               std::vector<uint32_t>* worker_of,
                               const TableRunner::SideWork& side) {
  if (profiler_) {
    profiler_->Observe(index, directory_, run_);
    allocator_.SetScoredTables(profiler_->scored());
  }
  if (forced_.empty()) {
    allocator_.Allocate(index, directory_, rng, worker_of, run_, side);
    return absl::OkStatus();
  }
  run_.ForEach(side.items, side.fn);
  *worker_of = std::move(forced_.front());
  forced_.pop_front();
  if (worker_of->size() != index.num_samples()) {
    return absl::InvalidArgumentError(absl::StrCat("forced allocation of ", worker_of->size(),
                                                   " samples for a batch of ",
                                                   index.num_samples()));
  }
  for (size_t s = 0; s < worker_of->size(); ++s) {
    if ((*worker_of)[s] >= options_.num_workers) {
      return absl::InvalidArgumentError(absl::StrCat("forced allocation: sample ", s, " to worker ",
                                                     (*worker_of)[s], " of ",
                                                     options_.num_workers));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<IterationPlan> Planner::Plan(const data::KeyBatch& batch,
                                            const data::KeyBatch* next) {
  IterationPlan plan;
  if (auto s = PlanInto(batch, next, &plan); !s.ok()) return s;
  return plan;
}

namespace {

// The tables of `index` by decreasing number of distinct rows (ties in
// table order): each table's planning costs about that.
std::vector<uint32_t> TablesLargestFirst(const BatchIndex& index) {
  std::vector<uint32_t> order(index.num_tables());
  std::iota(order.begin(), order.end(), 0);
  auto rows = [&](uint32_t t) { return index.begin(t + 1) - index.begin(t); };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return rows(a) > rows(b); });
  return order;
}

// Empties every list of `plan` for `num_workers` × `num_tables`, keeping
// the lists' memory.
void ResetPlan(uint32_t num_workers, uint32_t num_tables, IterationPlan* plan) {
  plan->workers.resize(num_workers);
  for (WorkerPlan& wp : plan->workers) {
    wp.samples.clear();
    wp.counts = PlanCounts();
    wp.tables.resize(num_tables);
    wp.slots.resize(num_tables);
    for (plan::TablePlan& tp : wp.tables) {
      for (auto* list :
           {&tp.drop.slots, &tp.evict.slots, &tp.fetch.slots, &tp.owned_slots, &tp.hold.slots,
            &tp.push.slots, &tp.flush.slots, &tp.writeback.slots, &tp.receive.slots, &tp.send.slots,
            &tp.send.peers, &tp.incoming.peers, &tp.remote.slots, &tp.remote.peers,
            &tp.gather.slots, &tp.gather.peers, &tp.init.slots}) {
        list->clear();
      }
      for (auto* list :
           {&tp.drop.keys, &tp.expire.keys, &tp.evict.keys, &tp.fetch.keys, &tp.hold.keys,
            &tp.push.keys, &tp.flush.keys, &tp.writeback.keys, &tp.receive.keys, &tp.send.keys,
            &tp.incoming.keys, &tp.remote.keys, &tp.gather.keys, &tp.init.keys}) {
        list->clear();
      }
      for (auto* list :
           {&tp.fetch.early, &tp.receive.served, &tp.send.served, &tp.incoming.served}) {
        list->clear();
      }
    }
    for (plan::TableSamples& ts : wp.slots) {
      ts.offsets.clear();
      ts.slots.clear();
    }
  }
}

}  // namespace

absl::Status Planner::PlanInto(const data::KeyBatch& batch, const data::KeyBatch* next,
                               const data::KeyBatch* after_next, IterationPlan* out) {
  if (!failed_.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the planner stopped at an earlier error and plans nothing more: ", failed_.message()));
  }
  if (after_next != nullptr && next == nullptr) {
    return absl::InvalidArgumentError(
        "a batch after the next given without the next: the read-ahead must be in order");
  }
  if (have_after_ && next == nullptr) {
    return absl::InvalidArgumentError(
        "no next batch, but the previous call gave the batch after it (its index is built)");
  }
  for (const data::KeyBatch* b : {&batch, next, after_next}) {
    if (b == nullptr) continue;
    if (b->tables.size() != num_tables_) {
      return absl::InvalidArgumentError(
          absl::StrCat("batch has ", b->tables.size(), " tables, the planner ", num_tables_));
    }
    if (!stale_.empty()) {
      for (const data::KeyBatch::Table& t : b->tables) {
        if (!t.expired.empty()) {
          return absl::InvalidArgumentError(
              "batch lists expired rows: policy het holds gradients of rows, no row expiry");
        }
      }
    }
    if (b->num_samples < options_.num_workers) {
      return absl::InvalidArgumentError(absl::StrCat("batch of ", b->num_samples, " samples for ",
                                                     options_.num_workers,
                                                     " workers: every worker needs one"));
    }
  }
  if (have_next_ && next_.num_samples() != batch.num_samples) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch of ", batch.num_samples, " samples is not the read-ahead batch given before (",
        next_.num_samples(), " samples)"));
  }
  if (have_after_ && after_.num_samples() != next->num_samples) {
    return absl::InvalidArgumentError(absl::StrCat(
        "next batch of ", next->num_samples, " samples is not the batch after it given before (",
        after_.num_samples(), " samples)"));
  }
  // From here on the planner's state changes: an error leaves it half
  // updated, so it refuses to plan again rather than plan from that state.
  failed_ = PlanValidated(batch, next, after_next, out);
  return failed_;
}

absl::Status Planner::PlanValidated(const data::KeyBatch& batch, const data::KeyBatch* next,
                                    const data::KeyBatch* after_next, IterationPlan* out) {
  IterationPlan& plan = *out;
  CounterRng rng(options_.seed, iteration_, 0);
  if (have_next_) {
    std::swap(current_, next_);
    std::swap(worker_of_, next_worker_of_);
  } else {
    next_users_ready_ = false;
    current_.Build(batch, iteration_, &directory_, run_);
    if (auto s = Allocate(current_, &rng, &worker_of_); !s.ok()) return s;
  }

  // The batch's largest tables first, on every phase's threads (the
  // read-ahead batches' phases too: their tables' sizes are alike).
  const std::vector<uint32_t> table_order = TablesLargestFirst(current_);
  run_.SetTableOrder(table_order);
  const uint32_t W = options_.num_workers;
  plan.iteration = iteration_;
  plan.last = next == nullptr;
  ResetPlan(W, num_tables_, &plan);
  for (uint32_t s = 0; s < batch.num_samples; ++s) plan.workers[worker_of_[s]].samples.push_back(s);
  run_.ForEachTable(num_tables_,
                    [&](uint32_t t) { ExpireRows(t, batch.tables[t].expired, &plan); });

  for (auto& counts : table_counts_) std::fill(counts.begin(), counts.end(), PlanCounts());
  if (!options_.policy.keep_cache) {
    run_.ForEachTable(num_tables_, [&](uint32_t t) {
      for (uint32_t w = 0; w < W; ++w) {
        std::vector<uint32_t> resident;
        caches_[w][t].ForEachResident([&](uint32_t slot) { resident.push_back(slot); });
        for (uint32_t slot : resident) Evict(t, w, slot, &plan.workers[w]);
      }
    });
  }
  if (next_users_ready_) {
    users_.swap(next_users_);
    sole_.swap(next_sole_);
    needed_.swap(next_needed_);
    next_users_ready_ = false;
  } else {
    ComputeUsers(current_, worker_of_, &users_, &sole_, &needed_);
  }
  if (iteration_ == 0 && !options_.warm_keys.empty()) WarmStart(&plan);
  slot_of_id_.resize(current_.num_ids());
  absl::Status planned = run_.ForEachTableStatus(num_tables_, [&](uint32_t t) {
    remote_ids_[t].clear();
    for (uint32_t w = 0; w < W; ++w) {
      if (auto s = PlanTable(t, w, &plan); !s.ok()) return s;
      FillSampleSlots(t, &plan.workers[w]);
      CopyLengthsAndWeights(batch.tables[t], plan.workers[w].samples, &plan.workers[w].slots[t]);
    }
    GatherLists(t, &plan);
    ApplyTraining(t);
    return absl::OkStatus();
  });
  if (!planned.ok()) return planned;
  // Policy het: the clocks this iteration's pushes and evictions sent are
  // the PS's once it commits; the flushes below are decided against them.
  if (!stale_.empty()) run_.ForEachTable(num_tables_, [&](uint32_t t) { stale_[t].Commit(); });

  if (next != nullptr) {
    if (have_after_) {
      std::swap(next_, after_);  // indexed by the previous call
      have_after_ = false;
    } else {
      next_.Build(*next, iteration_ + 1, &directory_, run_);
    }
    // The batch after it is indexed beside the allocation's serial part,
    // which reads neither the directory nor that index.
    TableRunner::SideWork index_after;
    if (after_next != nullptr) {
      after_.Start(*after_next);
      index_after = {num_tables_, [&](uint32_t k) {
                       const uint32_t t = table_order[k];
                       after_.IndexTable(*after_next, t, iteration_ + 2, &directory_[t]);
                     }};
    }
    if (auto s = Allocate(next_, &rng, &next_worker_of_, index_after); !s.ok()) return s;
    if (after_next != nullptr) {
      after_.Finish(run_);
      have_after_ = true;
    }
    have_next_ = true;
    if (FlushesAt(options_.flush_every, iteration_) ||
        (options_.flush_before_new_files && !next->files_started.empty())) {
      FlushDirty(&plan);
    } else if (options_.policy.sync == SyncMode::kOwnership) {
      CommunicationPlan(&plan);
    } else if (options_.policy.sync == SyncMode::kStale) {
      StaleFlushes(&plan);
    }
  } else {
    have_next_ = false;
    FlushDirty(&plan);
  }
  run_.ForEachTable(num_tables_, [&](uint32_t t) {
    if (!stale_.empty()) stale_[t].Commit();  // the flushes' clocks
    directory_[t].Sweep(iteration_);
  });
  MergeCounts(&plan);
  ++iteration_;
  return absl::OkStatus();
}

void Planner::MergeCounts(IterationPlan* plan) {
  for (uint32_t t = 0; t < num_tables_; ++t) {
    for (uint32_t w = 0; w < options_.num_workers; ++w) {
      plan->workers[w].counts += table_counts_[t][w];
    }
  }
}

absl::Status Planner::PlanTable(uint32_t t, uint32_t w, IterationPlan* plan) {
  CacheLayout& cache = caches_[w][t];
  RowDirectory& dir = directory_[t];
  WorkerPlan& wp = plan->workers[w];
  plan::TablePlan& tp = wp.tables[t];
  PlanCounts& counts = table_counts_[t][w];
  std::vector<uint32_t>& missing = missing_[t];
  // From the PS, or, when it was never trained, initialised by the worker.
  auto fetch = [&](uint32_t handle, uint32_t slot) {
    const RowState& row = dir.at(handle);
    if (!trained_.empty() && !dir.MarkedTrained(handle) && !trained_[t].MayContain(row.key)) {
      tp.init.keys.push_back(row.key);
      tp.init.slots.push_back(slot);
      ++counts.initialized;
      return;
    }
    tp.fetch.keys.push_back(row.key);
    tp.fetch.slots.push_back(slot);
    tp.fetch.early.push_back(row.EarlyDistance(iteration_));
    ++counts.fetched;
  };
  // Brings the row's newest version into `slot` (empty, or holding an
  // outdated copy): a row handed off to w after the previous step (its
  // holder is w) or served to it by its holder from what w received, any
  // other from the PS, which must hold it: false (a planner bug) when
  // another worker holds it dirty.
  auto bring_in = [&](const RowState& row, uint32_t id, uint32_t slot) -> bool {
    const bool handed_off = row.holder == static_cast<int32_t>(w);
    if (handed_off || IsServed(row, id)) {
      tp.receive.slots.push_back(slot);
      tp.receive.keys.push_back(row.key);
      tp.receive.served.push_back(handed_off ? 0 : 1);
      return true;
    }
    if (row.holder != kPsHolder) return false;
    fetch(current_.row(id), slot);
    return true;
  };
  auto dirty_elsewhere = [&](const RowState& row) {
    return absl::InternalError(absl::StrCat(
        "planner invariant broken at iteration ", iteration_, ": worker ", w, " table ", t,
        " must fetch key ", row.key, " whose newest version is dirty at worker ", row.holder));
  };

  const bool stale = !stale_.empty();
  auto held_invalid = [&](Key key, uint32_t slot) {
    return absl::InternalError(absl::StrCat(
        "planner invariant broken at iteration ", iteration_, ": worker ", w, " table ", t,
        " reads its held copy of key ", key, " (slot ", slot, "), ", stale_[t].Behind(w, slot, key),
        " clocks behind: it should have been flushed"));
  };

  const std::vector<uint32_t>& needed = needed_[w][t];
  // Upper bounds, so each list is allocated once.
  tp.fetch.keys.reserve(tp.fetch.keys.size() + needed.size());
  tp.fetch.slots.reserve(tp.fetch.slots.size() + needed.size());
  tp.fetch.early.reserve(tp.fetch.early.size() + needed.size());
  if (options_.policy.sync == SyncMode::kOwnership) tp.owned_slots.reserve(needed.size());
  tp.push.slots.reserve(needed.size());
  tp.push.keys.reserve(needed.size());
  missing.clear();
  // Two passes over the rows, so that the cache's eviction-order records
  // (as scattered as the directory) can be read ahead like the entries:
  // first find the slots of the rows the cache holds, then use them.
  for (size_t i = 0; i < needed.size(); ++i) {
    // The directory is far larger than the CPU caches: start the entries a
    // few rows ahead.
    if (i + kRowLookahead < needed.size()) {
      dir.PrefetchRow(current_.row(needed[i + kRowLookahead]));
    }
    const uint32_t id = needed[i];
    const uint32_t handle = current_.row(id);
    if (!dir.IsResident(handle, w)) {
      missing.push_back(id);
      slot_of_id_[id] = kNoSlot;
      continue;
    }
    const uint32_t slot = dir.SlotOf(handle, w);
    cache.PrefetchUse(slot);
    slot_of_id_[id] = slot;
  }
  counts.uses += needed.size();
  for (uint32_t id : needed) {
    const uint32_t slot = slot_of_id_[id];
    if (slot == kNoSlot) continue;
    cache.Use(slot, iteration_);
    const uint32_t handle = current_.row(id);
    if (stale) {
      // HET's CheckValid; an invalid copy is fetched again in place.
      const Key key = current_.key(id);
      if (stale_[t].Valid(w, slot, key)) {
        ++counts.hits;
        continue;
      }
      if (stale_[t].state(w, slot) == StaleCopies::State::kHeld) return held_invalid(key, slot);
      fetch(handle, slot);
      stale_[t].Fetched(w, slot, key, /*in_place=*/true);
      continue;
    }
    if (dir.IsNewest(handle, w)) {
      ++counts.hits;
      continue;
    }
    if (!bring_in(dir.at(handle), id, slot)) return dirty_elsewhere(dir.at(handle));  // in place
    dir.MarkNewest(handle, w);
  }
  tp.evict.slots.reserve(tp.evict.slots.size() + missing.size());
  tp.evict.keys.reserve(tp.evict.keys.size() + missing.size());
  if (!missing.empty()) {
    // Evict until the missing rows fit within capacity (then, as capacity ≤
    // slots, they also find free slots), as far as rows not trained now allow.
    const size_t want = cache.resident() + missing.size();
    const size_t over = want > options_.capacity[t] ? want - options_.capacity[t] : 0;
    std::vector<uint32_t>& victims = victims_[t];
    victims.clear();
    cache.Victims(iteration_, over, &victims);
    // The victims' directory entries are cold: start reading them ahead.
    for (size_t i = 0; i < victims.size(); ++i) {
      if (i + kRowLookahead < victims.size()) {
        dir.PrefetchRow(cache.RowAt(victims[i + kRowLookahead]));
      }
      Evict(t, w, victims[i], &wp);
    }
  }
  if (cache.slots() - cache.resident() < missing.size()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("iteration ", iteration_, ": worker ", w, " trains ", needed.size(),
                     " rows of table ", t, " but its cache has ", cache.slots(), " slots"));
  }
  for (uint32_t id : missing) {
    const uint32_t handle = current_.row(id);
    const uint32_t slot = cache.Insert(handle, iteration_);
    if (!bring_in(dir.at(handle), id, slot)) return dirty_elsewhere(dir.at(handle));
    dir.SetSlot(handle, w, slot);
    dir.AddCopy(handle, w);
    slot_of_id_[id] = slot;
    if (stale) stale_[t].Fetched(w, slot, current_.key(id), /*in_place=*/false);
  }
  const bool ownership = options_.policy.sync == SyncMode::kOwnership;
  // The rows w updates itself (owned) are dirty at w once trained: its
  // eviction order keeps them after its clean copies.
  for (uint32_t id : needed) {
    const uint32_t slot = slot_of_id_[id];
    if (stale) {
      // HET's stale write: held while the copy's clocks allow, else pushed
      // with what the copy held.
      const Key key = current_.key(id);
      if (stale_[t].Train(w, slot, key) == StaleCopies::Write::kHold) {
        tp.hold.slots.push_back(slot);
        tp.hold.keys.push_back(key);
        cache.SetDirty(slot, true);
      } else {
        tp.push.slots.push_back(slot);
        tp.push.keys.push_back(key);
        cache.SetDirty(slot, false);
        stale_pushed_[t].push_back(current_.row(id));
        ++counts.pushed;
      }
      continue;
    }
    if (ownership && sole_[id] != kSeveral) {
      tp.owned_slots.push_back(slot);
      cache.SetDirty(slot, true);
    } else if (options_.serve) {
      // One trainer applies everyone's gradients (OwnerOf); the owner's
      // gather list is made once every worker has a slot (GatherLists).
      const RowState& row = dir.at(current_.row(id));
      const uint32_t owner = OwnerOf(row, id);
      if (owner == w) {
        tp.owned_slots.push_back(slot);
        cache.SetDirty(slot, true);
        continue;
      }
      tp.remote.slots.push_back(slot);
      tp.remote.keys.push_back(row.key);
      tp.remote.peers.push_back(owner);
      remote_ids_[t].emplace_back(w, id);
      ++counts.transferred;
      ++counts.owner_gradients;
    } else {
      tp.push.slots.push_back(slot);
      tp.push.keys.push_back(current_.key(id));
      ++counts.pushed;
    }
  }
  return absl::OkStatus();
}

void Planner::GatherLists(uint32_t t, IterationPlan* plan) {
  const RowDirectory& dir = directory_[t];
  for (const auto& [w, id] : remote_ids_[t]) {
    const uint32_t handle = current_.row(id);
    const uint32_t owner = OwnerOf(dir.at(handle), id);
    plan::TablePlan& gather = plan->workers[owner].tables[t];
    gather.gather.slots.push_back(dir.SlotOf(handle, owner));
    gather.gather.keys.push_back(current_.key(id));
    gather.gather.peers.push_back(w);
  }
}

void Planner::WarmStart(IterationPlan* plan) {
  for (uint32_t t = 0; t < num_tables_; ++t) {
    RowDirectory& dir = directory_[t];
    for (uint32_t w = 0; w < options_.num_workers; ++w) {
      const std::vector<uint32_t>& needed = needed_[w][t];
      if (needed.size() >= options_.capacity[t]) continue;
      absl::flat_hash_set<Key> trained;
      for (uint32_t id : needed) trained.insert(current_.key(id));
      size_t room = options_.capacity[t] - needed.size();
      CacheLayout& cache = caches_[w][t];
      plan::TablePlan& tp = plan->workers[w].tables[t];
      for (Key key : options_.warm_keys[t]) {
        if (room == 0) break;
        if (trained.contains(key) || !cache.HasFree()) continue;
        const uint32_t handle = dir.FindOrAdd(key);
        if (dir.IsResident(handle, w)) continue;  // a duplicate in the list
        const RowState& row = dir.at(handle);
        const uint32_t slot = cache.Insert(handle, iteration_);
        dir.SetSlot(handle, w, slot);
        dir.AddCopy(handle, w);
        if (!stale_.empty()) stale_[t].Fetched(w, slot, key, /*in_place=*/false);
        if (!trained_.empty()) {  // nothing is trained before iteration 0
          tp.init.keys.push_back(key);
          tp.init.slots.push_back(slot);
          ++plan->workers[w].counts.initialized;
        } else {
          tp.fetch.keys.push_back(key);
          tp.fetch.slots.push_back(slot);
          tp.fetch.early.push_back(row.EarlyDistance(iteration_));
          ++plan->workers[w].counts.fetched;
        }
        --room;
      }
    }
  }
}

void Planner::FillSampleSlots(uint32_t t, WorkerPlan* wp) {
  // Per sample of the worker (increasing), its uses' slot_of_id_[ids[i]]
  // for i in [offsets[s], offsets[s + 1]). The samples are scattered, but
  // one table's offsets and ids stay in the CPU caches (prefetching them
  // cost more than it saved, even at 80 × 256).
  const std::vector<uint32_t>& samples = wp->samples;
  const uint32_t* offsets = current_.offsets(t).data();
  const uint32_t* id = current_.ids(t).data();
  const uint32_t* slot_of_id = slot_of_id_.data();
  plan::TableSamples* out = &wp->slots[t];
  const size_t n = samples.size();
  // Sized once, then written through pointers (this runs per use).
  out->offsets.resize(n + 1);
  uint32_t* offset = out->offsets.data();
  uint32_t uses = 0;
  *offset++ = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t s = samples[k];
    uses += offsets[s + 1] - offsets[s];
    *offset++ = uses;
  }
  out->slots.resize(uses);
  uint32_t* slot = out->slots.data();
  for (size_t k = 0; k < n; ++k) {
    const uint32_t s = samples[k];
    for (uint32_t i = offsets[s], end = offsets[s + 1]; i < end; ++i) *slot++ = slot_of_id[id[i]];
  }
}

void Planner::ApplyTraining(uint32_t t) {
  RowDirectory& dir = directory_[t];
  const bool ownership = options_.policy.sync == SyncMode::kOwnership;
  for (uint32_t id = current_.begin(t); id < current_.begin(t + 1); ++id) {
    if (id + kRowLookahead < current_.begin(t + 1))
      dir.PrefetchRow(current_.row(id + kRowLookahead));
    const uint32_t handle = current_.row(id);
    RowState& row = dir.at(handle);
    if (!trained_.empty() && !dir.MarkedTrained(handle)) {
      trained_[t].Add(row.key);
      dir.MarkTrained(handle);
    }
    if (!stale_.empty()) continue;  // the pushed rows are marked below
    dir.ClearNewest(handle);
    // A dirty holder is among the row's trainers (the communication plan
    // made sure), and its copy's slot is already marked dirty (PlanTable).
    if (ownership && sole_[id] != kSeveral) {
      row.holder = static_cast<int16_t>(sole_[id]);
      dir.MarkNewest(handle, sole_[id]);
    } else if (options_.serve) {
      row.holder = static_cast<int16_t>(OwnerOf(row, id));  // it gathered every gradient
      dir.MarkNewest(handle, static_cast<uint32_t>(row.holder));
    } else {
      row.holder = kPsHolder;  // the PS applies the summed gradients at commit
      row.MarkPsChanged(iteration_);
    }
  }
  if (!stale_.empty()) {
    // After every worker's fetches of this table: their early flags read
    // the previous iteration's changes.
    for (uint32_t handle : stale_pushed_[t]) dir.at(handle).MarkPsChanged(iteration_);
    stale_pushed_[t].clear();
  }
}

void Planner::WriteBack(RowState* row, PlanCounts* counts) {
  row->holder = kPsHolder;  // the worker's copy stays, clean and still the newest
  row->MarkPsChanged(iteration_);
  ++counts->written_back;
}

void Planner::Evict(uint32_t t, uint32_t w, uint32_t slot, WorkerPlan* wp) {
  CacheLayout& cache = caches_[w][t];
  const uint32_t handle = cache.RowAt(slot);
  RowDirectory& dir = directory_[t];
  RowState& row = dir.at(handle);
  wp->tables[t].evict.slots.push_back(slot);
  wp->tables[t].evict.keys.push_back(row.key);
  if (row.holder == static_cast<int32_t>(w)) {
    WriteBack(&row, &table_counts_[t][w]);  // before the slot is reused
  }
  if (!stale_.empty() && stale_[t].Evict(w, slot, row.key)) {
    stale_pushed_[t].push_back(handle);  // its held gradients go to the PS now
    ++table_counts_[t][w].pushed;
  }
  dir.RemoveCopy(handle, w);
  dir.ClearSlot(handle, w);
  if (!dir.IsCached(handle) && row.holder == kPsHolder) dir.MaybeRelease(handle);
  cache.Remove(slot);
}

void Planner::ExpireRows(uint32_t t, const std::vector<Key>& expired, IterationPlan* plan) {
  RowDirectory& dir = directory_[t];
  const uint32_t W = options_.num_workers;
  for (Key key : expired) {
    plan->workers[static_cast<uint32_t>(Mix64(key) % W)].tables[t].expire.keys.push_back(key);
    // An entry even for a row no cache holds: it records the PS change
    // that keeps the next iteration's fetch from being early.
    const uint32_t handle = dir.FindOrAdd(key);
    for (uint32_t w = 0; w < W; ++w) {
      if (!dir.IsResident(handle, w)) continue;
      const uint32_t slot = dir.SlotOf(handle, w);
      plan::TablePlan& tp = plan->workers[w].tables[t];
      tp.drop.slots.push_back(slot);
      tp.drop.keys.push_back(key);
      dir.RemoveCopy(handle, w);
      dir.ClearSlot(handle, w);
      caches_[w][t].Remove(slot);
    }
    RowState& row = dir.at(handle);
    row.holder = kPsHolder;
    row.MarkPsChanged(iteration_);
    dir.MaybeRelease(handle);
  }
}

void Planner::CommunicationPlan(IterationPlan* plan) {
  ComputeUsers(next_, next_worker_of_, &next_users_, &next_sole_, &next_needed_);
  next_users_ready_ = true;
  run_.ForEachTable(num_tables_, [&](uint32_t t) {
    RowDirectory& dir = directory_[t];
    for (uint32_t id = next_.begin(t); id < next_.begin(t + 1); ++id) {
      if (id + kRowLookahead < next_.begin(t + 1)) dir.PrefetchRow(next_.row(id + kRowLookahead));
      const uint32_t handle = next_.row(id);
      RowState& row = dir.at(handle);
      if (row.holder == kPsHolder) continue;
      const uint32_t h = static_cast<uint32_t>(row.holder);
      if (next_sole_[id] == h) continue;  // the holder alone trains it next: keep it dirty
      const WorkerSet& next = next_users_[id];
      const uint32_t h_slot = dir.SlotOf(handle, h);  // the holder's copy
      // The holder sends the row to `to`: a copy to train on (served), or
      // the row itself, which becomes `to`'s (a hand-off).
      auto send = [&](uint32_t to, bool served) {
        plan::TablePlan& out = plan->workers[h].tables[t];
        out.send.slots.push_back(h_slot);
        out.send.keys.push_back(row.key);
        out.send.peers.push_back(to);
        out.send.served.push_back(served ? 1 : 0);
        plan::TablePlan& in = plan->workers[to].tables[t];
        in.incoming.keys.push_back(row.key);
        in.incoming.peers.push_back(h);
        in.incoming.served.push_back(served ? 1 : 0);
        PlanCounts& counts = table_counts_[t][h];
        ++counts.transferred;
        ++(served ? counts.served_copies : counts.handoffs);
      };
      const bool several = next_sole_[id] == kSeveral;
      // Who holds it next: the holder when it serves the others, else
      // (hand-offs) the one other trainer or, when it serves too, one of
      // several picked by the key. kPsHolder: written back instead.
      int32_t owner = kPsHolder;
      if (options_.serve && several && next.Has(h)) {
        owner = static_cast<int32_t>(h);
      } else if (options_.handoff && (!several || options_.serve)) {
        owner = static_cast<int32_t>(PickOwner(next, row.key));
      }
      if (owner != kPsHolder) {
        // Served copies first: the holder still holds it dirty while it
        // sends them. The PS copy stays as it was; a sender that hands the
        // row off keeps a clean copy, stale once the receiver trains.
        next.ForEach([&](uint32_t user) {
          if (user != h && user != static_cast<uint32_t>(owner) && !dir.IsNewest(handle, user)) {
            send(user, /*served=*/true);
          }
        });
        if (owner != static_cast<int32_t>(h)) {
          send(static_cast<uint32_t>(owner), /*served=*/false);
          // h keeps a clean copy; the owner's turns dirty when it trains.
          caches_[h][t].SetDirty(h_slot, false);
          row.holder = static_cast<int16_t>(owner);
        }
        continue;
      }
      plan::TablePlan& tp = plan->workers[h].tables[t];
      tp.writeback.slots.push_back(h_slot);
      tp.writeback.keys.push_back(row.key);
      WriteBack(&row, &table_counts_[t][h]);
      caches_[h][t].SetDirty(h_slot, false);
      table_counts_[t][h].handoffs += next_sole_[id] != kSeveral;
    }
  });
}

void Planner::FlushDirty(IterationPlan* plan) {
  run_.ForEachTable(num_tables_, [&](uint32_t t) {
    RowDirectory& dir = directory_[t];
    for (uint32_t w = 0; w < options_.num_workers; ++w) {
      const CacheLayout& cache = caches_[w][t];
      plan::TablePlan& tp = plan->workers[w].tables[t];
      cache.ForEachResident([&](uint32_t slot) {
        if (!stale_.empty()) {
          if (stale_[t].state(w, slot) == StaleCopies::State::kHeld) {
            FlushHeld(t, w, slot, &plan->workers[w]);
          } else {
            stale_[t].Outdate(w, slot);
          }
          return;
        }
        RowState& row = dir.at(cache.RowAt(slot));
        if (row.holder != static_cast<int32_t>(w)) return;
        tp.writeback.slots.push_back(slot);
        tp.writeback.keys.push_back(row.key);
        WriteBack(&row, &table_counts_[t][w]);
      });
      caches_[w][t].MarkAllClean();  // every row it held dirty went back
    }
  });
}

}  // namespace herald::scheduler

namespace herald::scheduler {

void Planner::FlushHeld(uint32_t t, uint32_t w, uint32_t slot, WorkerPlan* wp) {
  RowState& row = directory_[t].at(caches_[w][t].RowAt(slot));
  plan::TablePlan& tp = wp->tables[t];
  tp.flush.slots.push_back(slot);
  tp.flush.keys.push_back(row.key);
  stale_[t].Flush(w, slot, row.key);
  caches_[w][t].SetDirty(slot, false);
  row.MarkPsChanged(iteration_);
  ++table_counts_[t][w].pushed;
}

void Planner::StaleFlushes(IterationPlan* plan) {
  ComputeUsers(next_, next_worker_of_, &next_users_, &next_sole_, &next_needed_);
  next_users_ready_ = true;
  run_.ForEachTable(num_tables_, [&](uint32_t t) {
    const RowDirectory& dir = directory_[t];
    for (uint32_t w = 0; w < options_.num_workers; ++w) {
      for (uint32_t id : next_needed_[w][t]) {
        const uint32_t handle = next_.row(id);
        if (!dir.IsResident(handle, w)) continue;
        const uint32_t slot = dir.SlotOf(handle, w);
        // A held copy is within its own bound (Train pushes past it), so
        // only the global clock can invalidate it.
        if (stale_[t].state(w, slot) == StaleCopies::State::kHeld &&
            !stale_[t].Valid(w, slot, next_.key(id))) {
          FlushHeld(t, w, slot, &plan->workers[w]);
        }
      }
    }
  });
}

}  // namespace herald::scheduler
