#include "worker/cache/step_executor.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"
#include "worker/cache/table_parallel.h"

namespace herald::worker {
namespace {

bool NeedsPs(const plan::Step& step) {
  for (const plan::TablePlan& p : step.plan) {
    if (!p.fetch.keys.empty() || !p.push.slots.empty() || !p.writeback.slots.empty() ||
        !p.flush.slots.empty() || !p.expire.keys.empty()) {
      return true;
    }
  }
  return false;
}

// Waits for `call`, adding the time waited to `*ms`.
absl::Status WaitTimed(PendingCall<absl::Status>& call, double* ms) {
  const absl::Time start = absl::Now();
  absl::Status s = call.Wait();
  *ms += MillisSince(start);
  return s;
}

// Tokens of checks ahead (plan::Step::checked_at), unique in the process.
std::atomic<uint64_t> next_check_token{1};

}  // namespace

int DefaultCheckThreads() {
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / 4, 1, 4);
}

StepExecutor::StepExecutor(Device* device, RecModel* model, DenseOptimizer* dense_optimizer,
                           DenseAllReducer* all_reducer, ps::PsClient* ps, EmbeddingCache* cache,
                           ExecutorOptions options)
    : device_(device),
      model_(model),
      dense_optimizer_(dense_optimizer),
      all_reducer_(all_reducer),
      ps_(ps),
      cache_(cache),
      step_validator_(options.check_threads),
      options_(options),
      table_pool_(options.check_threads > 1
                      ? std::make_unique<ThreadPool>(options.check_threads - 1, "cache-tables")
                      : nullptr),
      transfer_(device),
      upload_(device),
      fetcher_(device, ps, cache, &transfer_, options.seed, options.init_scale, table_pool_.get()),
      served_(device, cache, &transfer_, options.exchanger, options.rank, options.num_workers),
      held_(device, cache, &transfer_),
      hand_offs_(cache, &transfer_, options.exchanger, options.rank, options.num_workers,
                 options.overlap, table_pool_.get()),
      device_time_(device, kDeviceSpans) {}

absl::Status StepExecutor::Check(const plan::Step& step) {
  // Checked ahead (at the end of the step before) if the cache is unchanged since.
  if (step.checked_at == 0 || step.checked_at != check_token_ ||
      cache_->changes() != checked_changes_) {
    HERALD_RETURN_IF_ERROR(step_validator_.Check(*cache_, step));
  }
  HERALD_RETURN_IF_ERROR(hand_offs_.CheckPeers(step, options_.serve));
  // With the previous step's hand-off exchange still running (overlap), its
  // rows are checked once they are in, before they are placed.
  if (!hand_offs_.receiving()) HERALD_RETURN_IF_ERROR(hand_offs_.CheckReceived(step));
  if (step.num_labels != model_->shape().num_labels) {
    return absl::InvalidArgumentError(absl::StrCat("samples.labels_per_sample: ", step.num_labels,
                                                   ", the model reads ", model_->shape().num_labels,
                                                   " label(s) per sample"));
  }
  // Each table's samples split into as many features as the model reads
  // from it.
  std::vector<uint32_t> features(cache_->num_tables(), 0);
  for (const TableShape& f : model_->shape().tables) {
    if (f.table < features.size()) ++features[f.table];
  }
  for (size_t t = 0; t < step.samples.size() && t < features.size(); ++t) {
    if (step.samples[t].features != std::max<uint32_t>(features[t], 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("samples.tables[", t, "]: ", step.samples[t].features,
                       " features, the model reads ", features[t], " from the table"));
    }
  }
  for (size_t t = 0; t < step.plan.size(); ++t) {
    if (!step.plan[t].init.keys.empty() && options_.init_scale.size() != cache_->num_tables()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "table ", t, ": the plan initialises rows, but this executor has ",
          options_.init_scale.size(), " init scales for ", cache_->num_tables(), " tables"));
    }
  }
  if (!options_.use_ps && NeedsPs(step)) {
    return absl::FailedPreconditionError(
        "step needs the parameter servers (fetch, push or write-back) but this executor runs "
        "without them");
  }
  return absl::OkStatus();
}

absl::StatusOr<StepResult> StepExecutor::Run(const plan::Step& step,
                                             absl::Span<const plan::Step* const> ahead) {
  const plan::Step* next = ahead.empty() ? nullptr : ahead.front();
  StepResult result;
  result.num_samples = step.num_samples;
  const absl::Time start = absl::Now();
  HERALD_RETURN_IF_ERROR(Check(step));
  result.times.stage_ms += MillisSince(start);
  std::vector<ps::TableGrads> held_grads;
  // 0: expired rows leave the cache unwritten (the PS deletes them at this
  // iteration's commit).
  ForEachTable(table_pool_.get(), cache_->num_tables(),
               [&](size_t t) { cache_->EvictSlots(t, step.plan[t].drop.slots); });
  HERALD_RETURN_IF_ERROR(EvictAndFetch(step, &held_grads, &result));  // 1, 2
  HERALD_RETURN_IF_ERROR(PlaceHandedOff(step, &result));              // the previous step's 10
  if (options_.overlap && options_.use_ps) {
    fetcher_.Prefetch(step.iteration,
                      ahead.first(std::min<size_t>(
                          ahead.size(), std::max<uint32_t>(options_.prefetch_steps, 1))));
  }
  // 4: with overlap the dense gradients travel during 5b-10 (in buckets
  // from the backward on, where the reducer runs in the background) and are
  // waited for at 5, before the step ends; on every other way out too.
  bool dense_pending = true;
  absl::Cleanup wait_dense = [&] {
    if (dense_pending) all_reducer_->FinishAllReduceSum().IgnoreError();
  };
  QueueTraining(step, &result);  // 3
  StartedPush started_push = StartPush(step, &result);
  StartReduceDense(&result);
  auto finish_dense = [&] {
    dense_pending = false;
    return Phase(step, "train", FinishReduceDense(step, &result));  // 4, 5
  };
  if (!options_.overlap) HERALD_RETURN_IF_ERROR(finish_dense());
  if (options_.serve) {  // 5b
    HERALD_RETURN_IF_ERROR(
        Phase(step, "gradients of served rows", served_.Exchange(step, &result)));
  }
  HERALD_RETURN_IF_ERROR(Phase(step, "train (owned rows)", ApplyOwned(step, &result)));  // 6
  HERALD_RETURN_IF_ERROR(
      PushAndWriteBack(step, started_push, std::move(held_grads), &result));  // 7, 8
  HERALD_RETURN_IF_ERROR(Commit(step, &result));                              // 9
  if (options_.exchanger != nullptr) {                                        // 10
    HERALD_RETURN_IF_ERROR(Phase(step, "hand-off", hand_offs_.Send(step, &result)));
  }
  StageNext(next, &result);
  if (dense_pending) HERALD_RETURN_IF_ERROR(finish_dense());
  HERALD_RETURN_IF_ERROR(Settle(step, &result));
  return result;
}

absl::Status StepExecutor::Phase(const plan::Step& step, const char* name, absl::Status s) const {
  if (s.ok()) s = device_->status();  // a GPU fault surfaces in the phase it happened
  return s.ok() ? s : Annotate(s, absl::StrCat("iteration ", step.iteration, " ", name));
}

absl::Status StepExecutor::WriteBack(const plan::Step& step,
                                     const std::vector<ps::TableRows>& rows) {
  return rows.empty() ? absl::OkStatus()
                      : ps_->WriteBack(step.job_id, Iteration(step.iteration),
                                       WorkerRank(options_.rank), rows);
}

PendingCall<absl::Status> StepExecutor::StartWriteBack(const plan::Step& step,
                                                       const std::vector<ps::TableRows>& rows) {
  return rows.empty()
             ? PendingCall<absl::Status>::Done(absl::OkStatus())
             : ps_->StartWriteBack(step.job_id, Iteration(step.iteration),
                                   WorkerRank(options_.rank), rows, ps::Launch::kBackground);
}

absl::Status StepExecutor::EvictAndFetch(const plan::Step& step,
                                         std::vector<ps::TableGrads>* held_grads,
                                         StepResult* result) {
  absl::Time start = absl::Now();
  // Policy het: evicted slots' held gradients go to the PS with this
  // step's push (read before the slots are reused).
  *held_grads = held_.Collect(step, &plan::TablePlan::evict, result);
  const std::vector<ps::TableRows> evicted =
      CollectWriteBack(step, &plan::TablePlan::evict, SlotsAfter::kFreed, result);
  if (!options_.overlap) {
    HERALD_RETURN_IF_ERROR(Phase(step, "evict", WriteBack(step, evicted)));
    result->times.writeback_ms += MillisSince(start);
    return Phase(step, "fetch", fetcher_.Fetch(step, result));
  }
  // 1 while 2: the evicted rows travel during the fetch.
  PendingCall<absl::Status> eviction = StartWriteBack(step, evicted);
  result->times.writeback_ms += MillisSince(start);
  const absl::Status fetched = fetcher_.Fetch(step, result);
  // waited beyond the fetch
  const absl::Status sent = WaitTimed(eviction, &result->times.writeback_ms);
  HERALD_RETURN_IF_ERROR(Phase(step, "evict", sent));
  return Phase(step, "fetch", fetched);
}

absl::Status StepExecutor::PlaceHandedOff(const plan::Step& step, StepResult* result) {
  if (hand_offs_.receiving()) {
    const absl::Time start = absl::Now();
    const absl::Status exchanged = hand_offs_.Receive();
    result->times.writeback_ms += MillisSince(start);  // waited beyond the fetch
    HERALD_RETURN_IF_ERROR(Phase(step, "hand-off (previous step)", exchanged));
    HERALD_RETURN_IF_ERROR(Phase(step, "fetch (rows handed off)", hand_offs_.CheckReceived(step)));
  }
  return Phase(step, "fetch (rows handed off)", hand_offs_.Place(step));
}

absl::Status StepExecutor::PushAndWriteBack(const plan::Step& step, StartedPush& started,
                                            std::vector<ps::TableGrads> held_grads,
                                            StepResult* result) {
  // Both read from the device first, then sent (with overlap at once, the
  // push leaving while the write-back's rows are read).
  absl::Time start = absl::Now();
  std::vector<ps::TableGrads> grads = FinishPush(step, started, result);
  AppendGrads(held_.Collect(step, &plan::TablePlan::flush, result), &held_grads);
  AppendGrads(std::move(held_grads), &grads);
  result->times.push_ms += MillisSince(start);
  auto collect_written = [&] {
    const absl::Time start = absl::Now();
    std::vector<ps::TableRows> written =
        CollectWriteBack(step, &plan::TablePlan::writeback, SlotsAfter::kClean, result);
    result->times.writeback_ms += MillisSince(start);
    return written;
  };
  if (!options_.overlap) {
    const std::vector<ps::TableRows> written = collect_written();
    start = absl::Now();
    HERALD_RETURN_IF_ERROR(Phase(step, "push",
                                 grads.empty()
                                     ? absl::OkStatus()
                                     : ps_->PushGradients(step.job_id, Iteration(step.iteration),
                                                          WorkerRank(options_.rank), grads)));
    result->times.push_ms += MillisSince(start);
    start = absl::Now();
    HERALD_RETURN_IF_ERROR(Phase(step, "write-back", WriteBack(step, written)));
    result->times.writeback_ms += MillisSince(start);
    return absl::OkStatus();
  }
  PendingCall<absl::Status> pushing =
      grads.empty()
          ? PendingCall<absl::Status>::Done(absl::OkStatus())
          : ps_->StartPushGradients(step.job_id, Iteration(step.iteration),
                                    WorkerRank(options_.rank), grads, ps::Launch::kBackground);
  const std::vector<ps::TableRows> written = collect_written();
  PendingCall<absl::Status> writing = StartWriteBack(step, written);
  const absl::Status pushed = WaitTimed(pushing, &result->times.push_ms);
  // waited beyond the push
  const absl::Status wrote = WaitTimed(writing, &result->times.writeback_ms);
  HERALD_RETURN_IF_ERROR(Phase(step, "push", pushed));
  return Phase(step, "write-back", wrote);
}

absl::Status StepExecutor::Commit(const plan::Step& step, StepResult* result) {
  if (!options_.use_ps) return absl::OkStatus();
  if (start_commit_) return Phase(step, "iteration done", start_commit_(step));
  const absl::Time start = absl::Now();
  const std::vector<ps::TableKeys> expire = ExpiredRows(step);
  auto done = ps_->IterationDone(step.job_id, Iteration(step.iteration), WorkerRank(options_.rank),
                                 options_.num_workers, &result->ps_disk_reads, &expire);
  HERALD_RETURN_IF_ERROR(Phase(step, "iteration done", done.status()));
  result->times.commit_ms += MillisSince(start);
  return absl::OkStatus();
}

std::vector<ps::TableKeys> StepExecutor::ExpiredRows(const plan::Step& step) {
  std::vector<ps::TableKeys> expire;
  for (size_t t = 0; t < step.plan.size(); ++t) {
    if (step.plan[t].expire.keys.empty()) continue;
    expire.push_back({TableId(static_cast<uint32_t>(t)), step.plan[t].expire.keys});
  }
  return expire;
}

void StepExecutor::StageNext(const plan::Step* next, StepResult* result) {
  // While the device may still be training: check the next step against
  // the cache as this step leaves it (a failure is reported when it runs),
  // and pack its lists for the device.
  const absl::Time start = absl::Now();
  if (next != nullptr && step_validator_.Check(*cache_, *next).ok()) {
    check_token_ = next_check_token.fetch_add(1);
    checked_changes_ = cache_->changes();
    next->checked_at = check_token_;
    upload_.Stage(*next);
  }
  result->times.stage_ms += MillisSince(start);
}

absl::Status StepExecutor::Settle(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  result->loss_sum = model_->TakeLoss();  // waits for the device
  result->device_ms = device_time_.TakeMs();
  upload_.Settled();
  fetcher_.Settled();
  result->times.compute_ms += MillisSince(start);
  return Phase(step, "train", absl::OkStatus());
}

std::vector<ps::TableRows> StepExecutor::CollectWriteBack(
    const plan::Step& step, plan::SlotRows plan::TablePlan::*listed_in, SlotsAfter after,
    StepResult* result) {
  // The dirty rows of every table, read in one transfer.
  std::vector<ps::TableRows> rows;
  std::vector<std::vector<uint32_t>> dirty;  // parallel to rows
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    EmbeddingCache::Table& table = cache_->table(t);
    std::vector<uint32_t> slots;
    ps::TableRows out;
    out.table = TableId(static_cast<uint32_t>(t));
    out.row_floats = table.row_floats;
    for (uint32_t slot : (step.plan[t].*listed_in).slots) {
      if (table.states[slot] != SlotState::kDirty) continue;  // clean evictions just drop
      slots.push_back(slot);
      out.keys.push_back(table.keys[slot]);
      out.versions.push_back(table.versions[slot]);
    }
    if (slots.empty()) continue;
    result->rows_written_back += slots.size();
    result->bytes_moved += slots.size() * (table.row_floats * sizeof(float) + 16);
    rows.push_back(std::move(out));
    dirty.push_back(std::move(slots));
  }
  std::vector<SlotTransfer::Rows> reads;
  for (size_t i = 0; i < rows.size(); ++i) {
    EmbeddingCache::Table& table = cache_->table(rows[i].table.value());
    const int row_floats = static_cast<int>(table.row_floats);
    reads.push_back({table.rows.data(), row_floats, &dirty[i], row_floats});
  }
  std::vector<std::vector<float>> read = transfer_.Read(reads);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].rows = std::move(read[i]);
  if (after == SlotsAfter::kFreed) {  // hash-map work: tables at once
    ForEachTable(table_pool_.get(), cache_->num_tables(),
                 [&](size_t t) { cache_->EvictSlots(t, (step.plan[t].*listed_in).slots); });
    return rows;
  }
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    for (uint32_t slot : (step.plan[t].*listed_in).slots) {
      cache_->SetState(t, slot, SlotState::kClean);  // the PS now holds this version
    }
  }
  return rows;
}

void StepExecutor::QueueTraining(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  // Every list the device needs this step, in one copy (packed during the
  // step before where it was given as `next`).
  upload_.Upload(step);
  ModelInput in;
  in.rows = static_cast<int>(step.num_samples);
  in.labels = upload_.labels();
  in.dense = upload_.dense();
  in.iteration = step.iteration;
  in.sample_ids = upload_.sample_ids();
  // One input per feature, in feature order, over its table's rows and
  // gradients (a table several features look up: each its own bags).
  for (const TableShape& feature : model_->shape().tables) {
    const size_t t = feature.table;
    EmbeddingCache::Table& table = cache_->table(t);
    EmbeddingBagInput bags;
    if (step.samples[t].features > 1) {
      const uint32_t j = feature.index_in_table;
      bags.offsets = upload_.feature_offsets(t, j);
      bags.slots = upload_.feature_slots(t, j);
      bags.entries = upload_.feature_entries(t, j);
      bags.weights = upload_.feature_weights(t, j);
    } else {
      bags.offsets = upload_.offsets(t);
      bags.slots = upload_.slots(t);
      bags.weights = upload_.weights(t);
      bags.entries = static_cast<uint32_t>(step.samples[t].slots.size());
    }
    bags.cache_rows = table.rows.data();
    bags.row_stride = static_cast<int>(table.row_floats);
    bags.slot_grads = table.grads.data();
    bags.capacity = table.capacity;
    in.tables.push_back(bags);
  }
  // Queued: the loss is read at the end of the step (Run).
  device_time_.Start(kForwardBackward);
  dense_unstarted_ = model_->params().size();
  RecModel::GradsReady buckets;
  if (options_.overlap && all_reducer_->reduces_in_background()) {
    buckets = [this](size_t begin) { StartDenseBucket(begin, /*rest=*/false); };
  }
  model_->QueueTrainStep(in, 1.0f / static_cast<float>(step.global_batch_size), buckets);
  device_time_.Stop(kForwardBackward);
  result->times.compute_ms += MillisSince(start);
}

void StepExecutor::StartDenseBucket(size_t begin, bool rest) {
  const size_t n = dense_unstarted_ - std::min(begin, dense_unstarted_);
  if (n == 0 || (!rest && n * sizeof(float) < options_.all_reduce_bucket_bytes)) return;
  all_reducer_->StartAllReduceSum(model_->params().grads().data() + begin, n);
  dense_unstarted_ = begin;
}

void StepExecutor::StartReduceDense(StepResult* result) {
  const absl::Time start = absl::Now();
  StartDenseBucket(0, /*rest=*/true);
  result->times.allreduce_ms += MillisSince(start);
}

absl::Status StepExecutor::FinishReduceDense(const plan::Step& step, StepResult* result) {
  absl::Time start = absl::Now();  // the all-reduce's time beyond the work done meanwhile
  DenseParameters& params = model_->params();
  HERALD_RETURN_IF_ERROR(all_reducer_->FinishAllReduceSum());
  result->times.allreduce_ms += MillisSince(start);

  start = absl::Now();
  device_time_.Start(kDenseStep);
  // Waited for with the owned rows' updates (ApplyOwned).
  dense_optimizer_->Step(params, step.iteration);
  device_time_.Stop(kDenseStep);
  result->times.compute_ms += MillisSince(start);
  return absl::OkStatus();
}

absl::Status StepExecutor::ApplyOwned(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  std::vector<Device::RowUpdateTable> updates;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    EmbeddingCache::Table& table = cache_->table(t);
    const std::vector<uint32_t>& owned = step.plan[t].owned_slots;
    if (owned.empty()) continue;
    Device::RowUpdateTable update;
    update.optimizer = math::AtIteration(table.optimizer, step.iteration);
    update.dim = static_cast<int>(table.dim);
    update.slots = upload_.owned(t);  // sent with the step (QueueTraining)
    update.n = static_cast<int>(owned.size());
    update.grads = table.grads.data();
    update.rows = table.rows.data();
    update.row_stride = static_cast<int>(table.row_floats);
    updates.push_back(update);
  }
  device_time_.Start(kRowUpdates);
  held_.Hold(step, &updates);
  device_->ApplyRowUpdatesAndZero(updates);
  device_time_.Stop(kRowUpdates);
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    for (uint32_t slot : step.plan[t].owned_slots) {
      cache_->SetState(t, slot, SlotState::kDirty);
      cache_->BumpVersion(t, slot);
    }
    for (uint32_t slot : step.plan[t].hold.slots) {
      cache_->SetState(t, slot, SlotState::kHeld);
      cache_->BumpVersion(t, slot);
    }
  }
  result->times.compute_ms += MillisSince(start);  // queued: waited for with the loss (Run)
  return absl::OkStatus();
}

StepExecutor::StartedPush StepExecutor::StartPush(const plan::Step& step, StepResult* result) {
  // Every table's shared rows' gradients, in one transfer, then zeroed.
  const absl::Time start = absl::Now();
  StartedPush started;
  std::vector<SlotTransfer::Rows> reads;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    EmbeddingCache::Table& table = cache_->table(t);
    const std::vector<uint32_t>& push = step.plan[t].push.slots;
    if (push.empty()) continue;
    started.tables.push_back(t);
    reads.push_back(
        {table.grads.data(), static_cast<int>(table.dim), &push, static_cast<int>(table.dim)});
  }
  started.read = transfer_.StartRead(reads);
  transfer_.ZeroRead(reads);
  result->times.push_ms += MillisSince(start);
  return started;
}

std::vector<ps::TableGrads> StepExecutor::FinishPush(const plan::Step& step, StartedPush& started,
                                                     StepResult* result) {
  std::vector<std::vector<float>> read = transfer_.FinishRead(started.read);
  const std::vector<size_t>& tables = started.tables;
  // Policy het: a pushed slot that held gradients pushes them too.
  std::vector<std::vector<uint32_t>> held_slots(cache_->num_tables());
  std::vector<std::vector<size_t>> held_at(cache_->num_tables());  // index in the push list
  for (size_t t : tables) {
    if (!cache_->table(t).HoldsGradients()) continue;  // never held any (other policies)
    const std::vector<uint32_t>& push = step.plan[t].push.slots;
    for (size_t i = 0; i < push.size(); ++i) {
      if (cache_->table(t).states[push[i]] != SlotState::kHeld) continue;
      held_slots[t].push_back(push[i]);
      held_at[t].push_back(i);
    }
  }
  std::vector<ps::TableGrads> grads;
  for (size_t i = 0; i < tables.size(); ++i) {
    const size_t t = tables[i];
    const plan::TablePlan& plan = step.plan[t];
    const uint32_t dim = cache_->table(t).dim;
    const uint64_t n = plan.push.slots.size();
    ps::TableGrads g;
    g.table = TableId(static_cast<uint32_t>(t));
    g.keys = plan.push.keys;
    g.dim = dim;
    g.grads = std::move(read[i]);
    grads.push_back(std::move(g));
    result->rows_pushed += n;
    result->bytes_moved += n * (dim * sizeof(float) + 8);
  }
  const std::vector<std::vector<float>> held = held_.Take(held_slots);
  for (size_t i = 0; i < tables.size(); ++i) {
    const size_t t = tables[i];
    const size_t dim = cache_->table(t).dim;
    for (size_t j = 0; j < held_at[t].size(); ++j) {
      float* g = grads[i].grads.data() + held_at[t][j] * dim;
      const float* h = held[t].data() + j * dim;
      for (size_t k = 0; k < dim; ++k) g[k] += h[k];
    }
    for (uint32_t slot : step.plan[t].push.slots) cache_->SetState(t, slot, SlotState::kStale);
  }
  return grads;
}

void StepExecutor::AppendGrads(std::vector<ps::TableGrads> more, std::vector<ps::TableGrads>* to) {
  for (ps::TableGrads& g : more) {
    auto same = std::find_if(to->begin(), to->end(),
                             [&](const ps::TableGrads& o) { return o.table == g.table; });
    if (same == to->end()) {
      to->push_back(std::move(g));
      continue;
    }
    same->keys.insert(same->keys.end(), g.keys.begin(), g.keys.end());
    same->grads.insert(same->grads.end(), g.grads.begin(), g.grads.end());
  }
}

}  // namespace herald::worker
