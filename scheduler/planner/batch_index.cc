#include "scheduler/planner/batch_index.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {
namespace {

constexpr size_t kLookahead = 12;

}  // namespace

void BatchIndex::Build(const data::KeyBatch& batch, uint64_t iteration,
                       std::vector<RowDirectory>* directories, const TableRunner& run) {
  Start(batch);
  run.ForEachTable(num_tables(),
                   [&](uint32_t t) { IndexTable(batch, t, iteration, &(*directories)[t]); });
  Finish(run);
}

void BatchIndex::Start(const data::KeyBatch& batch) {
  num_samples_ = batch.num_samples;
  const size_t num_tables = batch.tables.size();
  ids_.resize(num_tables);
  offsets_.resize(num_tables);
  tables_.resize(num_tables);
}

void BatchIndex::IndexTable(const data::KeyBatch& batch, uint32_t t, uint64_t iteration,
                            RowDirectory* directory) {
  // Resolve every key to its handle and give the table's distinct keys
  // local ids in first-use order. A row is seen for the first time in this
  // build when its pin stamp is older than this iteration's (builds come in
  // increasing iterations).
  const uint64_t stamp = iteration + 1;
  const data::KeyBatch::Table& table = batch.tables[t];
  RowDirectory& dir = *directory;
  PerTable& local = tables_[t];
  std::vector<uint32_t>& ids = ids_[t];
  const size_t n = table.keys.size();
  ids.resize(n);
  local.keys.clear();
  local.rows.clear();
  local.uses.clear();
  // Two passes with prefetching a few keys ahead: the directory is far
  // larger than the CPU caches, so its lookups are memory-latency bound.
  // Most uses repeat a key seen earlier in the batch (the small tables'
  // few keys, the others' hot ones): those are answered by a small
  // direct-mapped memo of this build's lookups (handles do not change
  // during a build) instead of the directory's hash index.
  KeyMemo& memo = local.memo;
  memo.Reset(n);
  local.handles.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (i + kLookahead < n && !memo.Has(table.keys[i + kLookahead])) {
      dir.Prefetch(table.keys[i + kLookahead]);
    }
    const Key key = table.keys[i];
    KeyMemo::Entry& entry = memo.At(key);
    if (entry.handle == RowDirectory::kNone || entry.key != key) {
      entry = {key, dir.FindOrAdd(key)};
    }
    local.handles[i] = entry.handle;
  }
  for (size_t i = 0; i < n; ++i) {
    if (i + kLookahead < n) dir.PrefetchRow(local.handles[i + kLookahead]);
    const uint32_t handle = local.handles[i];
    RowState& row = dir.at(handle);
    if (row.pin_stamp != stamp) {
      row.pin_stamp = stamp;
      row.batch_id = static_cast<uint32_t>(local.keys.size());
      local.keys.push_back(table.keys[i]);
      local.rows.push_back(handle);
      local.uses.push_back(0);
    }
    ids[i] = row.batch_id;
    ++local.uses[row.batch_id];
  }
  offsets_[t] = table.offsets;
}

void BatchIndex::Finish(const TableRunner& run) {
  const uint32_t num_tables = this->num_tables();
  begin_.assign(1, 0);
  for (uint32_t t = 0; t < num_tables; ++t) {
    begin_.push_back(begin_.back() + static_cast<uint32_t>(tables_[t].keys.size()));
  }
  keys_.resize(begin_.back());
  rows_.resize(begin_.back());
  uses_.resize(begin_.back());
  // Local ids become batch-wide ids.
  run.ForEachTable(num_tables, [&](uint32_t t) {
    const PerTable& local = tables_[t];
    const uint32_t base = begin_[t];
    std::copy(local.keys.begin(), local.keys.end(), keys_.begin() + base);
    std::copy(local.rows.begin(), local.rows.end(), rows_.begin() + base);
    std::copy(local.uses.begin(), local.uses.end(), uses_.begin() + base);
    for (uint32_t& id : ids_[t]) id += base;
  });
}

void BatchIndex::Save(StateWriter* out) const {
  out->Pod(num_samples_);
  out->Vec(keys_);
  out->Vec(rows_);
  out->Vec(uses_);
  out->Vec(begin_);
  out->Vecs(ids_);
  out->Vecs(offsets_);
}

bool BatchIndex::Load(StateReader* in, const std::vector<RowDirectory>& directories) {
  BatchIndex read;
  if (!in->Pod("batch.num_samples", &read.num_samples_) || !in->Vec("batch.keys", &read.keys_) ||
      !in->Vec("batch.rows", &read.rows_) || !in->Vec("batch.uses", &read.uses_) ||
      !in->Vec("batch.begin", &read.begin_) || !in->Vecs("batch.ids", &read.ids_) ||
      !in->Vecs("batch.offsets", &read.offsets_)) {
    return false;
  }
  const size_t tables = directories.size();
  const size_t ids = read.keys_.size();
  if (read.begin_.size() != tables + 1 || read.ids_.size() != tables ||
      read.offsets_.size() != tables || read.rows_.size() != ids || read.uses_.size() != ids ||
      read.begin_.front() != 0 || read.begin_.back() != ids ||
      !std::is_sorted(read.begin_.begin(), read.begin_.end())) {
    return in->Invalid("batch.begin", absl::StrCat("not an index of ", tables, " tables"));
  }
  for (uint32_t t = 0; t < tables; ++t) {
    const std::vector<uint32_t>& offsets = read.offsets_[t];
    if (offsets.size() != read.num_samples_ + 1 || offsets.front() != 0 ||
        offsets.back() != read.ids_[t].size() || !std::is_sorted(offsets.begin(), offsets.end())) {
      return in->Invalid("batch.offsets", absl::StrCat("table ", t, ": not ", read.num_samples_,
                                                       " samples' offsets"));
    }
    for (uint32_t id : read.ids_[t]) {
      if (id < read.begin_[t] || id >= read.begin_[t + 1]) {
        return in->Invalid("batch.ids", absl::StrCat("table ", t, ": id ", id, " is not its own"));
      }
    }
    for (uint32_t id = read.begin_[t]; id < read.begin_[t + 1]; ++id) {
      if (read.rows_[id] >= directories[t].num_handles()) {
        return in->Invalid("batch.rows", absl::StrCat("table ", t, ": row ", read.rows_[id], " of ",
                                                      directories[t].num_handles()));
      }
    }
  }
  read.tables_.resize(tables);
  *this = std::move(read);
  return true;
}

}  // namespace herald::scheduler
