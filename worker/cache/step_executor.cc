#include "worker/cache/step_executor.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/math/optimizer_spec.h"
#include "common/math/rank_ordered_sum.h"
#include "common/status.h"
#include "worker/cache/plan_check.h"
#include "worker/collectives/row_packet.h"

namespace herald::worker {
namespace {

double MillisSince(absl::Time start) { return absl::ToDoubleMilliseconds(absl::Now() - start); }

bool NeedsPs(const plan::Step& step) {
  for (const plan::TablePlan& p : step.plan) {
    if (!p.fetch.keys.empty() || !p.push.slots.empty() || !p.writeback.slots.empty() ||
        !p.flush.slots.empty()) {
      return true;
    }
  }
  return false;
}

}  // namespace

namespace {

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
      plan_checker_(options.check_threads),
      options_(options),
      upload_(device),
      read_back_(device) {
  staging_.Bind(device);
  slots_.Bind(device);
  for (int i = 0; i < 3; ++i) fetch_buffers_.emplace_back(device);
  hold_slots_.Bind(device);
  received_.resize(cache->num_tables());
}

void StepExecutor::UploadSlots(const std::vector<uint32_t>& slots) { slots_.CopyFromHost(slots); }

std::vector<float> StepExecutor::ReadSlots(const float* array, int stride,
                                           const std::vector<uint32_t>& slots, int width) {
  UploadSlots(slots);
  staging_.Resize(slots.size() * static_cast<size_t>(width));
  device_->GatherRows(array, stride, slots_.data(), static_cast<int>(slots.size()), width,
                      staging_.data());
  return staging_.ToHost();
}

void StepExecutor::WriteSlots(const std::vector<float>& host, const std::vector<uint32_t>& slots,
                              int width, int stride, float* array) {
  staging_.CopyFromHost(host);
  UploadSlots(slots);
  device_->ScatterRows(staging_.data(), slots_.data(), static_cast<int>(slots.size()), width,
                       stride, array);
}

std::vector<std::vector<float>> StepExecutor::ReadSlotsOfTables(
    const std::vector<SlotRows>& reads) {
  std::vector<uint32_t> slots;
  size_t floats = 0;
  for (const SlotRows& r : reads) {
    slots.insert(slots.end(), r.slots->begin(), r.slots->end());
    floats += r.slots->size() * static_cast<size_t>(r.width);
  }
  std::vector<std::vector<float>> out(reads.size());
  if (slots.empty()) return out;
  UploadSlots(slots);
  staging_.Resize(floats);
  size_t slot_at = 0, float_at = 0;
  for (const SlotRows& r : reads) {
    const int n = static_cast<int>(r.slots->size());
    device_->GatherRows(r.array, r.stride, slots_.data() + slot_at, n, r.width,
                        staging_.data() + float_at);
    slot_at += r.slots->size();
    float_at += r.slots->size() * static_cast<size_t>(r.width);
  }
  // The one wait, into memory reused from step to step (not cleared or
  // faulted in again).
  read_back_.Reserve(floats, 0);
  device_->CopyToHost(staging_.data(), read_back_.data(), floats * sizeof(float));
  const float* all = read_back_.data();
  float_at = 0;
  for (size_t i = 0; i < reads.size(); ++i) {
    const size_t n = reads[i].slots->size() * static_cast<size_t>(reads[i].width);
    out[i].assign(all + float_at, all + float_at + n);
    float_at += n;
  }
  return out;
}

absl::StatusOr<StepResult> StepExecutor::Run(const plan::Step& step, const plan::Step* next) {
  // Checked ahead (at the end of the step before) if the cache is unchanged since.
  if (step.checked_at == 0 || step.checked_at != check_token_ ||
      cache_->changes() != checked_changes_) {
    HERALD_RETURN_IF_ERROR(plan_checker_.Check(*cache_, step));
  }
  HERALD_RETURN_IF_ERROR(CheckHandOffs(step));
  // With the previous step's hand-off exchange still running (overlap), its
  // rows are checked once they are in, before they are placed.
  if (!handoff_) HERALD_RETURN_IF_ERROR(CheckReceived(step));
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
  StepResult result;
  result.num_samples = step.num_samples;
  auto phase = [&](const char* name, absl::Status s) {
    if (s.ok()) s = device_->status();  // a GPU fault surfaces in the phase it happened
    return s.ok() ? s : Annotate(s, absl::StrCat("iteration ", step.iteration, " ", name));
  };
  // Writes rows back (evictions, or the plan's) unless there are none.
  auto write_back = [&](const std::vector<ps::TableRows>& rows) {
    return rows.empty() ? absl::OkStatus()
                        : ps_->WriteBack(step.job_id, Iteration(step.iteration),
                                         WorkerRank(options_.rank), rows);
  };
  absl::Time start = absl::Now();
  // Policy het: evicted slots' held gradients go to the PS with this
  // step's push (read before the slots are reused).
  std::vector<ps::TableGrads> held_grads = CollectHeld(step, &plan::TablePlan::evict, &result);
  const std::vector<ps::TableRows> evicted =
      CollectWriteBack(step, &plan::TablePlan::evict, SlotsAfter::kFreed, &result);
  if (options_.overlap) {  // 1 while 2: the evicted rows travel during the fetch
    PendingCall<absl::Status> eviction =
        evicted.empty()
            ? PendingCall<absl::Status>::Done(absl::OkStatus())
            : ps_->StartWriteBack(step.job_id, Iteration(step.iteration), WorkerRank(options_.rank),
                                  evicted, ps::Launch::kBackground);
    result.times.writeback_ms += MillisSince(start);
    const absl::Status fetched = Fetch(step, &result);
    start = absl::Now();
    const absl::Status sent = eviction.Wait();
    result.times.writeback_ms += MillisSince(start);  // waited beyond the fetch
    HERALD_RETURN_IF_ERROR(phase("evict", sent));
    HERALD_RETURN_IF_ERROR(phase("fetch", fetched));
  } else {
    HERALD_RETURN_IF_ERROR(phase("evict", write_back(evicted)));
    result.times.writeback_ms += MillisSince(start);
    HERALD_RETURN_IF_ERROR(phase("fetch", Fetch(step, &result)));
  }
  if (handoff_) {
    start = absl::Now();
    const absl::Status exchanged = ReceiveHandOffs();
    result.times.writeback_ms += MillisSince(start);  // waited beyond the fetch
    HERALD_RETURN_IF_ERROR(phase("hand-off (previous step)", exchanged));
    HERALD_RETURN_IF_ERROR(phase("fetch (rows handed off)", CheckReceived(step)));
  }
  HERALD_RETURN_IF_ERROR(phase("fetch (rows handed off)", PlaceReceived(step)));
  if (options_.overlap && next != nullptr && options_.use_ps) Prefetch(*next);
  HERALD_RETURN_IF_ERROR(phase("train", Train(step, &result)));
  if (options_.serve) {
    HERALD_RETURN_IF_ERROR(phase("gradients of served rows", GatherServed(step, &result)));
  }
  HERALD_RETURN_IF_ERROR(phase("train (owned rows)", ApplyOwned(step, &result)));
  // 7 and 8: both read from the device first, then sent (at once with overlap).
  start = absl::Now();
  std::vector<ps::TableGrads> grads = CollectPush(step, &result);
  AppendGrads(CollectHeld(step, &plan::TablePlan::flush, &result), &held_grads);
  AppendGrads(std::move(held_grads), &grads);
  auto push = [&] {
    return grads.empty() ? absl::OkStatus()
                         : ps_->PushGradients(step.job_id, Iteration(step.iteration),
                                              WorkerRank(options_.rank), grads);
  };
  result.times.push_ms += MillisSince(start);
  start = absl::Now();
  const std::vector<ps::TableRows> written =
      CollectWriteBack(step, &plan::TablePlan::writeback, SlotsAfter::kClean, &result);
  result.times.writeback_ms += MillisSince(start);
  if (options_.overlap) {
    PendingCall<absl::Status> writing =
        written.empty()
            ? PendingCall<absl::Status>::Done(absl::OkStatus())
            : ps_->StartWriteBack(step.job_id, Iteration(step.iteration), WorkerRank(options_.rank),
                                  written, ps::Launch::kBackground);
    PendingCall<absl::Status> pushing =
        grads.empty()
            ? PendingCall<absl::Status>::Done(absl::OkStatus())
            : ps_->StartPushGradients(step.job_id, Iteration(step.iteration),
                                      WorkerRank(options_.rank), grads, ps::Launch::kBackground);
    start = absl::Now();
    const absl::Status pushed = pushing.Wait();
    result.times.push_ms += MillisSince(start);
    start = absl::Now();
    const absl::Status wrote = writing.Wait();
    result.times.writeback_ms += MillisSince(start);  // waited beyond the push
    HERALD_RETURN_IF_ERROR(phase("push", pushed));
    HERALD_RETURN_IF_ERROR(phase("write-back", wrote));
  } else {
    start = absl::Now();
    HERALD_RETURN_IF_ERROR(phase("push", push()));
    result.times.push_ms += MillisSince(start);
    start = absl::Now();
    HERALD_RETURN_IF_ERROR(phase("write-back", write_back(written)));
    result.times.writeback_ms += MillisSince(start);
  }
  if (options_.use_ps) {
    const absl::Time start = absl::Now();
    auto done =
        ps_->IterationDone(step.job_id, Iteration(step.iteration), WorkerRank(options_.rank),
                           options_.num_workers, &result.ps_disk_reads);
    HERALD_RETURN_IF_ERROR(phase("iteration done", done.status()));
    result.times.push_ms += MillisSince(start);
  }
  if (options_.exchanger != nullptr) {
    HERALD_RETURN_IF_ERROR(phase("hand-off", ExchangeHandOffs(step, &result)));
  }
  // While the device may still be training: check the next step against
  // the cache as this step leaves it (a failure is reported when it runs).
  // and pack its lists for the device.
  if (next != nullptr && plan_checker_.Check(*cache_, *next).ok()) {
    check_token_ = next_check_token.fetch_add(1);
    checked_changes_ = cache_->changes();
    next->checked_at = check_token_;
    upload_.Stage(*next);
  }
  start = absl::Now();
  result.loss_sum = model_->TakeLoss();  // waits for the device
  upload_.Settled();
  for (FetchBuffer& buffer : fetch_buffers_) buffer.device_reading = false;
  result.times.compute_ms += MillisSince(start);
  HERALD_RETURN_IF_ERROR(phase("train", absl::OkStatus()));
  return result;
}

absl::Status StepExecutor::CheckReceived(const plan::Step& step) const {
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& p = step.plan[t];
    if (p.receive.keys.size() != received_[t].size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "table ", t, ": the plan receives ", p.receive.keys.size(), " rows handed off, ",
          received_[t].size(), " were received after the previous step"));
    }
    for (size_t i = 0; i < p.receive.keys.size(); ++i) {
      const Key key = p.receive.keys[i];
      auto got = received_[t].find(key);
      if (got == received_[t].end()) {
        return absl::FailedPreconditionError(
            absl::StrCat("table ", t, ": the plan receives key ", key, ", which no worker sent"));
      }
      if (got->second.served != p.receive.Served(i)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "table ", t, ": the plan receives key ", key, " as ",
            got->second.served ? "handed off" : "served", ", but it was sent the other way"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status StepExecutor::CheckHandOffs(const plan::Step& step) const {
  bool hands_off = false, serves = false;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& p = step.plan[t];
    for (uint32_t to : p.send.peers) {
      if (to >= options_.num_workers || to == options_.rank) {
        return absl::InvalidArgumentError(absl::StrCat("table ", t, ": hand-off to worker ", to,
                                                       " (this is ", options_.rank, " of ",
                                                       options_.num_workers, ")"));
      }
    }
    for (const auto& [peers, what] : {std::pair{&p.incoming.peers, "hand-off from"},
                                      std::pair{&p.remote.peers, "gradient to the owner"},
                                      std::pair{&p.gather.peers, "gradient gathered from"}}) {
      for (uint32_t peer : *peers) {
        if (peer >= options_.num_workers || peer == options_.rank) {
          return absl::InvalidArgumentError(absl::StrCat("table ", t, ": ", what, " worker ", peer,
                                                         " (this is ", options_.rank, " of ",
                                                         options_.num_workers, ")"));
        }
      }
    }
    hands_off |= !p.send.slots.empty() || !p.incoming.keys.empty();
    serves |= !p.remote.slots.empty() || !p.gather.slots.empty() ||
              std::any_of(p.send.served.begin(), p.send.served.end(), [](uint8_t f) { return f; });
  }
  if (hands_off && options_.exchanger == nullptr) {
    return absl::FailedPreconditionError(
        "the plan hands rows off between workers, but this executor has no row exchanger");
  }
  if (options_.serve && options_.exchanger == nullptr) {
    return absl::FailedPreconditionError("this executor serves rows but has no row exchanger");
  }
  if (serves && !options_.serve) {
    return absl::FailedPreconditionError(
        "the plan serves rows from their owner, but this executor does not serve "
        "(the job's scheduling.serve is off)");
  }
  return absl::OkStatus();
}

absl::Status StepExecutor::PlaceReceived(const plan::Step& step) {
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    if (plan.receive.slots.empty()) continue;
    EmbeddingCache::Table& table = cache_->table(t);
    // Rows handed off (values with optimizer state), then served copies
    // (values only), each scattered into its slots at once.
    for (const bool served : {false, true}) {
      const uint32_t width = served ? table.dim : table.row_floats;
      std::vector<uint32_t> slots;
      std::vector<float> rows;
      for (size_t i = 0; i < plan.receive.slots.size(); ++i) {
        if (plan.receive.Served(i) != served) continue;
        const ReceivedRow& r = received_[t].at(plan.receive.keys[i]);
        slots.push_back(plan.receive.slots[i]);
        rows.insert(rows.end(), r.row.begin(), r.row.end());
      }
      if (slots.empty()) continue;
      WriteSlots(rows, slots, static_cast<int>(width), static_cast<int>(table.row_floats),
                 table.rows.data());
    }
    for (size_t i = 0; i < plan.receive.slots.size(); ++i) {
      const Key key = plan.receive.keys[i];
      cache_->Load(t, plan.receive.slots[i], key, received_[t].at(key).version);
      // A handed-off row is this worker's now; a served copy is its owner's.
      cache_->SetState(t, plan.receive.slots[i],
                       plan.receive.Served(i) ? SlotState::kServed : SlotState::kDirty);
    }
    received_[t].clear();
  }
  return absl::OkStatus();
}

absl::Status StepExecutor::ExchangeHandOffs(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  // Per destination: rows in table order, each table's in plan order, with
  // their versions: values with optimizer state, a served copy values only.
  const uint32_t W = options_.num_workers;
  std::vector<RowPacketWriter> send(W);
  std::vector<size_t> expect(W, 0);
  auto width = [](const EmbeddingCache::Table& table, bool served) {
    return served ? table.dim : table.row_floats;
  };
  HandOff handoff;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    EmbeddingCache::Table& table = cache_->table(t);
    handoff.incoming.push_back({plan.incoming, table.dim, table.row_floats});
    for (size_t i = 0; i < plan.incoming.peers.size(); ++i) {
      expect[plan.incoming.peers[i]] +=
          RowPacketWriter::RowBytes(width(table, plan.incoming.Served(i)));
    }
    if (plan.send.slots.empty()) continue;
    const int row_floats = static_cast<int>(table.row_floats);
    const std::vector<float> rows =
        ReadSlots(table.rows.data(), row_floats, plan.send.slots, row_floats);
    for (size_t i = 0; i < plan.send.slots.size(); ++i) {
      const uint32_t slot = plan.send.slots[i];
      const bool served = plan.send.Served(i);
      send[plan.send.peers[i]].AddRow(
          table.versions[slot],
          absl::MakeConstSpan(rows.data() + i * table.row_floats, width(table, served)));
      // A served row stays this worker's; a handed-off one is the receiver's now.
      if (!served) cache_->SetState(t, slot, SlotState::kClean);
      result->bytes_moved += RowPacketWriter::RowBytes(width(table, served));
    }
    result->rows_handed_off += plan.send.slots.size();
  }
  std::vector<std::string> packets;
  for (RowPacketWriter& w : send) packets.push_back(w.Take());
  handoff.exchange = options_.exchanger->Start(std::move(packets), std::move(expect),
                                               absl::Now() + options_.exchanger->timeout());
  handoff_ = std::move(handoff);
  // With overlap the next step waits for the rows after its fetch (Run)
  // while this worker moves on; the rows sent were read from the cache above.
  absl::Status received = options_.overlap ? absl::OkStatus() : ReceiveHandOffs();
  result->times.writeback_ms += MillisSince(start);
  return received;
}

absl::Status StepExecutor::ReceiveHandOffs() {
  HandOff handoff = std::move(*handoff_);
  handoff_.reset();
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> got, handoff.exchange.Wait());
  std::vector<RowPacketReader> from;
  for (uint32_t r = 0; r < got.size(); ++r) from.emplace_back(got[r], static_cast<int>(r));
  for (size_t t = 0; t < handoff.incoming.size(); ++t) {
    const Incoming& in = handoff.incoming[t];
    for (size_t i = 0; i < in.rows.keys.size(); ++i) {
      ReceivedRow row;
      row.served = in.rows.Served(i);
      row.row.resize(row.served ? in.dim : in.row_floats);
      HERALD_RETURN_IF_ERROR(from[in.rows.peers[i]].ReadRow(&row.version, absl::MakeSpan(row.row)));
      received_[t][in.rows.keys[i]] = std::move(row);
    }
  }
  for (const RowPacketReader& r : from) HERALD_RETURN_IF_ERROR(r.Finish());
  return absl::OkStatus();
}

absl::Status StepExecutor::GatherServed(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  // Per destination: the gradients of its rows, in table order, each
  // table's in plan (remote) order, `dim` floats each.
  const uint32_t W = options_.num_workers;
  std::vector<RowPacketWriter> send(W);
  std::vector<size_t> expect(W, 0);
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    EmbeddingCache::Table& table = cache_->table(t);
    const int dim = static_cast<int>(table.dim);
    for (uint32_t from : plan.gather.peers) expect[from] += table.dim * sizeof(float);
    if (plan.remote.slots.empty()) continue;
    const int n = static_cast<int>(plan.remote.slots.size());
    const std::vector<float> grads = ReadSlots(table.grads.data(), dim, plan.remote.slots, dim);
    device_->ZeroRows(slots_.data(), n, dim, dim, table.grads.data());
    for (int i = 0; i < n; ++i) {
      send[plan.remote.peers[i]].AddFloats(absl::MakeConstSpan(grads.data() + i * dim, dim));
      cache_->SetState(t, plan.remote.slots[i], SlotState::kStale);  // its owner updates it
    }
    result->rows_handed_off += n;
    result->bytes_moved += static_cast<uint64_t>(n) * dim * sizeof(float);
  }
  std::vector<std::string> packets;
  for (RowPacketWriter& w : send) packets.push_back(w.Take());
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> got,
                          options_.exchanger->Exchange(std::move(packets), std::move(expect)));
  std::vector<RowPacketReader> from;
  for (uint32_t r = 0; r < got.size(); ++r) from.emplace_back(got[r], static_cast<int>(r));
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    if (plan.gather.slots.empty()) continue;
    EmbeddingCache::Table& table = cache_->table(t);
    const uint32_t dim = table.dim;
    // The owned rows gathered into, each once, with this worker's gradient.
    std::vector<uint32_t> rows;
    absl::flat_hash_map<uint32_t, size_t> row_of;  // slot -> index into rows
    for (uint32_t slot : plan.gather.slots) {
      if (row_of.try_emplace(slot, rows.size()).second) rows.push_back(slot);
    }
    std::vector<float> own =
        ReadSlots(table.grads.data(), static_cast<int>(dim), rows, static_cast<int>(dim));
    // Every trainer's gradient per row, by rank: this worker's, then the
    // ones received.
    std::vector<std::vector<std::pair<uint32_t, std::vector<float>>>> parts(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      parts[r].emplace_back(options_.rank,
                            std::vector<float>(own.begin() + r * dim, own.begin() + (r + 1) * dim));
    }
    for (size_t i = 0; i < plan.gather.slots.size(); ++i) {
      const uint32_t peer = plan.gather.peers[i];
      std::vector<float> grad(dim);
      HERALD_RETURN_IF_ERROR(from[peer].ReadFloats(absl::MakeSpan(grad)));
      parts[row_of.at(plan.gather.slots[i])].emplace_back(peer, std::move(grad));
    }
    // The PS's sum, in rank order.
    using Part = std::pair<uint32_t, std::vector<float>>;
    for (size_t r = 0; r < rows.size(); ++r) {
      math::RankOrderedSum(
          parts[r], dim, [](const Part& p) { return p.first; },
          [](const Part& p) { return p.second.data(); }, own.data() + r * dim);
    }
    WriteSlots(own, rows, static_cast<int>(dim), static_cast<int>(dim), table.grads.data());
  }
  for (const RowPacketReader& r : from) HERALD_RETURN_IF_ERROR(r.Finish());
  result->times.push_ms += MillisSince(start);
  return absl::OkStatus();
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
  std::vector<SlotRows> reads;
  for (size_t i = 0; i < rows.size(); ++i) {
    EmbeddingCache::Table& table = cache_->table(rows[i].table.value());
    const int row_floats = static_cast<int>(table.row_floats);
    reads.push_back({table.rows.data(), row_floats, &dirty[i], row_floats});
  }
  std::vector<std::vector<float>> read = ReadSlotsOfTables(reads);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].rows = std::move(read[i]);
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const std::vector<uint32_t>& listed = (step.plan[t].*listed_in).slots;
    for (uint32_t slot : listed) {
      if (after == SlotsAfter::kFreed) {
        cache_->Evict(t, slot);
      } else {
        cache_->SetState(t, slot, SlotState::kClean);  // the PS now holds this version
      }
    }
  }
  return rows;
}

int StepExecutor::TakeFetchBuffer() {
  for (size_t tries = 0; tries < fetch_buffers_.size(); ++tries) {
    const size_t b = next_fetch_buffer_;
    next_fetch_buffer_ = (next_fetch_buffer_ + 1) % fetch_buffers_.size();
    if (fetch_buffers_[b].filling) continue;
    if (fetch_buffers_[b].device_reading) {
      device_->Synchronize();
      for (FetchBuffer& buffer : fetch_buffers_) buffer.device_reading = false;
    }
    fetch_buffers_[b].filling = true;
    return static_cast<int>(b);
  }
  // Unreachable: at most two fetches are in flight.
  std::fprintf(stderr, "StepExecutor: every fetch buffer is being filled\n");
  std::abort();
}

void StepExecutor::DropFetch(StartedFetch& fetch) {
  fetch.done = PendingCall<absl::Status>();
  if (fetch.buffer >= 0) fetch_buffers_[fetch.buffer].filling = false;
  fetch.buffer = -1;
}

StepExecutor::StartedFetch StepExecutor::StartFetchOf(const plan::Step& step, bool early,
                                                      ps::FetchMode mode, ps::Launch launch) {
  StartedFetch fetch;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    ps::TableKeys keys{TableId(static_cast<uint32_t>(t)), {}};
    std::vector<uint32_t> table_slots;
    for (size_t i = 0; i < plan.fetch.keys.size(); ++i) {
      const bool is_early = !plan.fetch.early.empty() && plan.fetch.early[i] != 0;
      if (is_early != early) continue;
      keys.keys.push_back(plan.fetch.keys[i]);
      table_slots.push_back(plan.fetch.slots[i]);
    }
    if (keys.keys.empty()) continue;
    fetch.row_at.push_back(fetch.floats);
    fetch.floats += keys.keys.size() * cache_->table(t).row_floats;
    fetch.rows += keys.keys.size();
    fetch.keys.push_back(std::move(keys));
    fetch.slots.push_back(std::move(table_slots));
    fetch.tables.push_back(t);
  }
  if (fetch.keys.empty()) return fetch;
  fetch.buffer = TakeFetchBuffer();
  FetchBuffer& buffer = fetch_buffers_[fetch.buffer];
  buffer.rows.Reserve(fetch.floats, 0);
  buffer.versions.resize(fetch.rows);
  ps::RowSink sink;
  size_t row = 0;
  for (size_t r = 0; r < fetch.keys.size(); ++r) {
    sink.rows.push_back(buffer.rows.data() + fetch.row_at[r]);
    sink.versions.push_back(buffer.versions.data() + row);
    sink.row_floats.push_back(cache_->table(fetch.tables[r]).row_floats);
    row += fetch.keys[r].keys.size();
  }
  fetch.done =
      ps_->StartFetchInto(step.job_id, Iteration(step.iteration), fetch.keys, mode, launch, sink);
  return fetch;
}

absl::Status StepExecutor::PlaceFetched(StartedFetch& fetch, StepResult* result) {
  if (fetch.buffer < 0) return absl::OkStatus();
  const absl::Status fetched = fetch.done.Wait();
  FetchBuffer& buffer = fetch_buffers_[fetch.buffer];
  buffer.filling = false;
  fetch.buffer = -1;
  HERALD_RETURN_IF_ERROR(fetched);
  // Every table's rows in one copy from the fetch buffer, then scattered
  // into their slots.
  std::vector<uint32_t> slots;
  slots.reserve(fetch.rows);
  for (const std::vector<uint32_t>& table_slots : fetch.slots) {
    slots.insert(slots.end(), table_slots.begin(), table_slots.end());
  }
  UploadSlots(slots);
  staging_.Resize(fetch.floats);
  device_->CopyFromHostBuffer(buffer.rows.data(), staging_.data(), fetch.floats * sizeof(float));
  buffer.device_reading = true;
  size_t slot_at = 0, row = 0;
  for (size_t r = 0; r < fetch.keys.size(); ++r) {
    const size_t t = fetch.tables[r];
    EmbeddingCache::Table& table = cache_->table(t);
    const int row_floats = static_cast<int>(table.row_floats);
    const size_t n = fetch.slots[r].size();
    device_->ScatterRows(staging_.data() + fetch.row_at[r], slots_.data() + slot_at,
                         static_cast<int>(n), row_floats, row_floats, table.rows.data());
    for (size_t i = 0; i < n; ++i) {
      cache_->Load(t, fetch.slots[r][i], fetch.keys[r].keys[i], buffer.versions[row + i]);
    }
    slot_at += n;
    row += n;
    result->rows_fetched += n;
    result->bytes_moved += n * (table.row_floats * sizeof(float) + 16);
  }
  return absl::OkStatus();
}

void StepExecutor::Prefetch(const plan::Step& next) {
  if (prefetch_.has_value()) DropFetch(prefetch_->fetch);
  prefetch_.reset();
  StartedFetch fetch =
      StartFetchOf(next, /*early=*/true, ps::FetchMode::kEarly, ps::Launch::kBackground);
  if (fetch.buffer < 0) return;
  prefetch_ = Prefetched{next.iteration, std::move(fetch)};
}

absl::Status StepExecutor::Fetch(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  for (bool early : {true, false}) {
    StartedFetch fetch;
    if (early && prefetch_.has_value() && prefetch_->iteration == step.iteration) {
      // Requested during the previous step: the same keys (one plan).
      fetch = std::move(prefetch_->fetch);
      prefetch_.reset();
      result->rows_prefetched += fetch.rows;
    } else {
      if (early && prefetch_.has_value()) {  // for another step: not placed
        DropFetch(prefetch_->fetch);
        prefetch_.reset();
      }
      fetch = StartFetchOf(step, early, early ? ps::FetchMode::kEarly : ps::FetchMode::kCommitted,
                           ps::Launch::kOnWait);
    }
    HERALD_RETURN_IF_ERROR(PlaceFetched(fetch, result));
  }
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    if (plan.init.keys.empty()) continue;
    EmbeddingCache::Table& table = cache_->table(t);
    std::vector<float> rows(plan.init.keys.size() * table.row_floats);
    for (size_t i = 0; i < plan.init.keys.size(); ++i) {
      math::InitialRow(options_.seed, static_cast<uint32_t>(t), plan.init.keys[i], table.dim,
                       options_.init_scale[t], table.optimizer, rows.data() + i * table.row_floats);
    }
    const int row_floats = static_cast<int>(table.row_floats);
    WriteSlots(rows, plan.init.slots, row_floats, row_floats, table.rows.data());
    for (size_t i = 0; i < plan.init.slots.size(); ++i) {
      cache_->Load(t, plan.init.slots[i], plan.init.keys[i], 0);
    }
    result->rows_initialized += plan.init.slots.size();
  }
  result->times.fetch_ms += MillisSince(start);
  return absl::OkStatus();
}

absl::Status StepExecutor::Train(const plan::Step& step, StepResult* result) {
  absl::Time start = absl::Now();
  // Every list the device needs this step, in one copy (packed during the
  // step before where it was given as `next`).
  const size_t tables = cache_->num_tables();
  upload_.Upload(step);
  ModelInput in;
  in.rows = static_cast<int>(step.num_samples);
  in.labels = upload_.labels();
  in.dense = upload_.dense();
  for (size_t t = 0; t < tables; ++t) {
    EmbeddingCache::Table& table = cache_->table(t);
    EmbeddingBagInput bags;
    bags.offsets = upload_.offsets(t);
    bags.slots = upload_.slots(t);
    bags.cache_rows = table.rows.data();
    bags.row_stride = static_cast<int>(table.row_floats);
    bags.slot_grads = table.grads.data();
    bags.entries = static_cast<uint32_t>(step.samples[t].slots.size());
    bags.capacity = table.capacity;
    in.tables.push_back(bags);
  }
  // Queued: the loss is read at the end of the step (Run).
  model_->QueueTrainStep(in, 1.0f / static_cast<float>(step.global_batch_size));
  result->times.compute_ms += MillisSince(start);

  start = absl::Now();
  DenseParameters& params = model_->params();
  HERALD_RETURN_IF_ERROR(all_reducer_->AllReduceSum(params.grads().data(), params.size()));
  result->times.allreduce_ms += MillisSince(start);

  start = absl::Now();
  dense_optimizer_->Step(params);  // waited for with the owned rows' updates (ApplyOwned)
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
    update.optimizer = table.optimizer;
    update.dim = static_cast<int>(table.dim);
    update.slots = upload_.owned(t);  // sent with the step (Train)
    update.n = static_cast<int>(owned.size());
    update.grads = table.grads.data();
    update.rows = table.rows.data();
    update.row_stride = static_cast<int>(table.row_floats);
    updates.push_back(update);
  }
  HoldGradients(step, &updates);
  device_->ApplyRowUpdatesAndZero(updates);
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

std::vector<ps::TableGrads> StepExecutor::CollectPush(const plan::Step& step, StepResult* result) {
  // Every table's shared rows' gradients, read in one transfer, then zeroed.
  std::vector<size_t> tables;
  std::vector<SlotRows> reads;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    EmbeddingCache::Table& table = cache_->table(t);
    const std::vector<uint32_t>& push = step.plan[t].push.slots;
    if (push.empty()) continue;
    tables.push_back(t);
    reads.push_back(
        {table.grads.data(), static_cast<int>(table.dim), &push, static_cast<int>(table.dim)});
  }
  std::vector<std::vector<float>> read = ReadSlotsOfTables(reads);
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
  size_t slot_at = 0;  // into slots_, which holds every table's list
  for (size_t i = 0; i < tables.size(); ++i) {
    const size_t t = tables[i];
    EmbeddingCache::Table& table = cache_->table(t);
    const plan::TablePlan& plan = step.plan[t];
    const int n = static_cast<int>(plan.push.slots.size());
    const int dim = static_cast<int>(table.dim);
    device_->ZeroRows(slots_.data() + slot_at, n, dim, dim, table.grads.data());
    slot_at += plan.push.slots.size();
    ps::TableGrads g;
    g.table = TableId(static_cast<uint32_t>(t));
    g.keys = plan.push.keys;
    g.dim = table.dim;
    g.grads = std::move(read[i]);
    grads.push_back(std::move(g));
    result->rows_pushed += n;
    result->bytes_moved += static_cast<uint64_t>(n) * (dim * sizeof(float) + 8);
  }
  const std::vector<std::vector<float>> held = TakeHeld(held_slots);
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

void StepExecutor::HoldGradients(const plan::Step& step,
                                 std::vector<Device::RowUpdateTable>* updates) {
  // Every table's hold list in one upload; per table, held += grads
  // (gathered, added, scattered back), then the slots are updated as
  // owned ones.
  std::vector<uint32_t> all;
  std::vector<size_t> at(cache_->num_tables() + 1, 0);
  size_t widest = 0;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    at[t] = all.size();
    const std::vector<uint32_t>& hold = step.plan[t].hold.slots;
    all.insert(all.end(), hold.begin(), hold.end());
    widest = std::max(widest, hold.size() * cache_->table(t).dim);
  }
  if (all.empty()) return;
  hold_slots_.CopyFromHost(all);
  staging_.Resize(2 * widest);  // once: no reallocation between the launches
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const int n = static_cast<int>(step.plan[t].hold.slots.size());
    if (n == 0) continue;
    EmbeddingCache::Table& table = cache_->table(t);
    const int dim = static_cast<int>(table.dim);
    float* held = cache_->HoldStorage(t).data();
    const uint32_t* slots = hold_slots_.data() + at[t];
    float* grads = staging_.data();
    float* sums = staging_.data() + static_cast<size_t>(n) * dim;
    device_->GatherRows(table.grads.data(), dim, slots, n, dim, grads);
    device_->GatherRows(held, dim, slots, n, dim, sums);
    device_->Add2D(grads, dim, n, dim, sums, dim);
    device_->ScatterRows(sums, slots, n, dim, dim, held);
    Device::RowUpdateTable update;
    update.optimizer = table.optimizer;
    update.dim = dim;
    update.slots = slots;
    update.n = n;
    update.grads = table.grads.data();
    update.rows = table.rows.data();
    update.row_stride = static_cast<int>(table.row_floats);
    updates->push_back(update);
  }
}

std::vector<std::vector<float>> StepExecutor::TakeHeld(
    const std::vector<std::vector<uint32_t>>& slots) {
  std::vector<size_t> tables;
  std::vector<SlotRows> reads;
  for (size_t t = 0; t < slots.size(); ++t) {
    if (slots[t].empty()) continue;
    const int dim = static_cast<int>(cache_->table(t).dim);
    tables.push_back(t);
    reads.push_back({cache_->HoldStorage(t).data(), dim, &slots[t], dim});
  }
  std::vector<std::vector<float>> out(slots.size());
  if (tables.empty()) return out;
  std::vector<std::vector<float>> read = ReadSlotsOfTables(reads);
  size_t slot_at = 0;  // into slots_, which holds every list read
  for (size_t i = 0; i < tables.size(); ++i) {
    const size_t t = tables[i];
    const int n = static_cast<int>(slots[t].size());
    const int dim = static_cast<int>(cache_->table(t).dim);
    device_->ZeroRows(slots_.data() + slot_at, n, dim, dim, cache_->HoldStorage(t).data());
    slot_at += slots[t].size();
    out[t] = std::move(read[i]);
  }
  return out;
}

std::vector<ps::TableGrads> StepExecutor::CollectHeld(const plan::Step& step,
                                                      plan::SlotRows plan::TablePlan::*listed_in,
                                                      StepResult* result) {
  std::vector<std::vector<uint32_t>> slots(cache_->num_tables());
  std::vector<std::vector<Key>> keys(cache_->num_tables());
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const EmbeddingCache::Table& table = cache_->table(t);
    if (!table.HoldsGradients()) continue;  // never held any (other policies)
    for (uint32_t slot : (step.plan[t].*listed_in).slots) {
      if (table.states[slot] != SlotState::kHeld) continue;
      slots[t].push_back(slot);
      keys[t].push_back(table.keys[slot]);
    }
  }
  std::vector<std::vector<float>> held = TakeHeld(slots);
  std::vector<ps::TableGrads> grads;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    if (slots[t].empty()) continue;
    ps::TableGrads g;
    g.table = TableId(static_cast<uint32_t>(t));
    g.keys = std::move(keys[t]);
    g.dim = cache_->table(t).dim;
    g.grads = std::move(held[t]);
    result->rows_pushed += g.keys.size();
    result->bytes_moved += g.keys.size() * (g.dim * sizeof(float) + 8);
    grads.push_back(std::move(g));
    if (listed_in == &plan::TablePlan::flush) {
      for (uint32_t slot : slots[t]) cache_->SetState(t, slot, SlotState::kStale);
    }
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
