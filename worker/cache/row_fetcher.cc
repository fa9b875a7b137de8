#include "worker/cache/row_fetcher.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "common/math/optimizer_spec.h"
#include "common/status.h"
#include "worker/cache/table_parallel.h"

namespace herald::worker {

RowFetcher::RowFetcher(Device* device, ps::PsClient* ps, EmbeddingCache* cache,
                       SlotTransfer* transfer, uint64_t seed, std::vector<float> init_scale,
                       ThreadPool* tables)
    : device_(device),
      ps_(ps),
      cache_(cache),
      transfer_(transfer),
      tables_(tables),
      seed_(seed),
      init_scale_(std::move(init_scale)) {}

void RowFetcher::Settled() {
  for (Buffer& buffer : buffers_) buffer.device_reading = false;
}

int RowFetcher::TakeBuffer() {
  for (size_t b = 0; b < buffers_.size(); ++b) {
    if (!buffers_[b].filling && !buffers_[b].device_reading) {
      buffers_[b].filling = true;
      return static_cast<int>(b);
    }
  }
  buffers_.emplace_back(device_);
  buffers_.back().filling = true;
  return static_cast<int>(buffers_.size() - 1);
}

void RowFetcher::Drop(StartedFetch& fetch) {
  fetch.done = PendingCall<absl::Status>();
  if (fetch.buffer >= 0) buffers_[fetch.buffer].filling = false;
  fetch.buffer = -1;
}

RowFetcher::StartedFetch RowFetcher::Start(const plan::Step& step, uint8_t lowest, uint8_t below,
                                           ps::Launch launch) {
  StartedFetch fetch;
  uint8_t least = below;  // the least distance fetched
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    ps::TableKeys keys{TableId(static_cast<uint32_t>(t)), {}};
    std::vector<uint32_t> table_slots;
    for (size_t i = 0; i < plan.fetch.keys.size(); ++i) {
      const uint8_t distance = plan.fetch.early.empty() ? 0 : plan.fetch.early[i];
      if (distance < lowest || distance >= below) continue;
      least = std::min(least, distance);
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
  fetch.buffer = TakeBuffer();
  Buffer& buffer = buffers_[fetch.buffer];
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
  const ps::FetchMode mode =
      least == 0 ? ps::FetchMode(ps::FetchMode::kCommitted) : ps::FetchMode::Early(least);
  fetch.done =
      ps_->StartFetchInto(step.job_id, Iteration(step.iteration), fetch.keys, mode, launch, sink);
  return fetch;
}

absl::Status RowFetcher::Place(StartedFetch& fetch, StepResult* result) {
  if (fetch.buffer < 0) return absl::OkStatus();
  const absl::Status fetched = fetch.done.Wait();
  Buffer& buffer = buffers_[fetch.buffer];
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
  const uint32_t* device_slots = transfer_->Upload(slots);
  float* staging = transfer_->Scratch(fetch.floats);
  device_->CopyFromHostBuffer(buffer.rows.data(), staging, fetch.floats * sizeof(float));
  buffer.device_reading = true;
  std::vector<Device::RowsOfTable> scatters;
  std::vector<size_t> first_row;  // per fetched table, its first row in the buffer
  size_t slot_at = 0, row = 0;
  for (size_t r = 0; r < fetch.keys.size(); ++r) {
    const size_t t = fetch.tables[r];
    EmbeddingCache::Table& table = cache_->table(t);
    const int row_floats = static_cast<int>(table.row_floats);
    const size_t n = fetch.slots[r].size();
    scatters.push_back({table.rows.data(), row_floats, device_slots + slot_at, static_cast<int>(n),
                        row_floats, staging + fetch.row_at[r]});
    first_row.push_back(row);
    slot_at += n;
    row += n;
    result->rows_fetched += n;
    result->bytes_moved += n * (table.row_floats * sizeof(float) + 16);
  }
  device_->ScatterRowsOfTables(scatters);
  // The cache's bookkeeping, tables at once (hash-map work).
  ForEachTable(tables_, fetch.keys.size(), [&](size_t r) {
    cache_->LoadSlots(fetch.tables[r], fetch.slots[r], fetch.keys[r].keys.data(),
                      buffer.versions.data() + first_row[r]);
  });
  return absl::OkStatus();
}

void RowFetcher::Prefetch(uint64_t current, absl::Span<const plan::Step* const> ahead) {
  std::vector<Prefetched> kept;
  for (const plan::Step* step : ahead) {
    if (step->iteration <= current) continue;
    const uint64_t steps_ahead = step->iteration - current;
    Prefetched entry{step->iteration, kMaxEarlyDistance + 1, {}};
    for (Prefetched& p : prefetched_) {
      if (p.iteration != step->iteration) continue;
      entry = std::move(p);
      p.fetches.clear();
    }
    if (steps_ahead < entry.requested_below) {
      StartedFetch fetch = Start(*step, static_cast<uint8_t>(steps_ahead), entry.requested_below,
                                 ps::Launch::kBackground);
      entry.requested_below = static_cast<uint8_t>(steps_ahead);
      if (fetch.buffer >= 0) entry.fetches.push_back(std::move(fetch));
    }
    kept.push_back(std::move(entry));
  }
  for (Prefetched& p : prefetched_) {  // not in `ahead` (moved-from entries hold none)
    for (StartedFetch& fetch : p.fetches) Drop(fetch);
  }
  prefetched_ = std::move(kept);
}

absl::Status RowFetcher::Fetch(const plan::Step& step, StepResult* result) {
  const absl::Time start = absl::Now();
  uint8_t requested_below = kMaxEarlyDistance + 1;
  std::vector<StartedFetch> prefetched;
  std::vector<Prefetched> later;
  for (Prefetched& p : prefetched_) {
    if (p.iteration == step.iteration) {
      requested_below = p.requested_below;
      prefetched = std::move(p.fetches);
    } else if (p.iteration > step.iteration) {
      later.push_back(std::move(p));
    } else {  // for a step that did not run: not placed
      for (StartedFetch& fetch : p.fetches) Drop(fetch);
    }
  }
  prefetched_ = std::move(later);
  // Requested during earlier steps: the same keys (one plan). After an
  // error the others are dropped (their buffers taken back).
  absl::Status placed;
  for (StartedFetch& fetch : prefetched) {
    if (!placed.ok()) {
      Drop(fetch);
      continue;
    }
    result->rows_prefetched += fetch.rows;
    placed = Place(fetch, result);
  }
  HERALD_RETURN_IF_ERROR(placed);
  // The rest: early rows not requested yet, then the rows the previous
  // iteration changes.
  for (auto [lowest, below] : {std::pair<uint8_t, uint8_t>{1, requested_below}, {0, 1}}) {
    if (lowest >= below) continue;
    StartedFetch fetch = Start(step, lowest, below, ps::Launch::kOnWait);
    HERALD_RETURN_IF_ERROR(Place(fetch, result));
  }
  Initialize(step, result);
  result->times.fetch_ms += MillisSince(start);
  return absl::OkStatus();
}

std::vector<float> RowFetcher::InitialRows(const plan::Step& step, size_t t) const {
  const std::vector<Key>& keys = step.plan[t].init.keys;
  const EmbeddingCache::Table& table = cache_->table(t);
  std::vector<float> rows(keys.size() * table.row_floats);
  for (size_t i = 0; i < keys.size(); ++i) {
    math::InitialRow(seed_, static_cast<uint32_t>(t), keys[i], table.dim, init_scale_[t],
                     table.optimizer, rows.data() + i * table.row_floats);
  }
  return rows;
}

void RowFetcher::PrepareInitialRows(plan::Step* step) const {
  if (step->plan.size() != cache_->num_tables() || init_scale_.size() != cache_->num_tables()) {
    return;  // a step that does not fit: the executor's check names it
  }
  std::vector<std::vector<float>> rows(cache_->num_tables());
  bool any = false;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    if (step->plan[t].init.keys.empty()) continue;
    rows[t] = InitialRows(*step, t);
    any = true;
  }
  if (any) step->initial_rows = std::move(rows);
}

void RowFetcher::Initialize(const plan::Step& step, StepResult* result) {
  // Every table's new rows, in one write.
  const bool prepared = step.initial_rows.size() == cache_->num_tables();
  std::vector<std::vector<float>> computed(prepared ? 0 : cache_->num_tables());
  std::vector<SlotTransfer::WriteRows> writes;
  for (size_t t = 0; t < cache_->num_tables(); ++t) {
    const plan::TablePlan& plan = step.plan[t];
    if (plan.init.keys.empty()) continue;
    EmbeddingCache::Table& table = cache_->table(t);
    if (!prepared) computed[t] = InitialRows(step, t);
    const std::vector<float>* rows = prepared ? &step.initial_rows[t] : &computed[t];
    const int row_floats = static_cast<int>(table.row_floats);
    writes.push_back({table.rows.data(), row_floats, &plan.init.slots, row_floats, rows});
    result->rows_initialized += plan.init.slots.size();
  }
  transfer_->Write(writes);
  // The cache's bookkeeping, tables at once: every row at version 0.
  ForEachTable(tables_, cache_->num_tables(), [&](size_t t) {
    const plan::TablePlan& plan = step.plan[t];
    const std::vector<uint64_t> versions(plan.init.slots.size(), 0);
    cache_->LoadSlots(t, plan.init.slots, plan.init.keys.data(), versions.data());
  });
}

}  // namespace herald::worker
