#include "scheduler/herald/batch_index.h"

namespace herald::scheduler {
namespace {

constexpr size_t kLookahead = 12;

// Distinguishes builds in RowState::seen_by_build (0 means never seen).
uint64_t NextBuildNumber() {
  static thread_local uint64_t builds = 0;
  return ++builds;
}

}  // namespace

void BatchIndex::Build(const data::KeyBatch& batch, uint64_t iteration,
                       std::vector<RowDirectory>* directories) {
  const uint64_t build = NextBuildNumber();
  num_samples_ = batch.num_samples;
  const size_t num_tables = batch.tables.size();
  keys_.clear();
  rows_.clear();
  uses_.clear();
  begin_.assign(1, 0);
  ids_.resize(num_tables);
  offsets_.resize(num_tables);
  for (size_t t = 0; t < num_tables; ++t) {
    const data::KeyBatch::Table& table = batch.tables[t];
    RowDirectory& dir = (*directories)[t];
    std::vector<uint32_t>& ids = ids_[t];
    const size_t n = table.keys.size();
    ids.resize(n);
    // Two passes with prefetching a few keys ahead: the directory is far
    // larger than the CPU caches, so its lookups are memory-latency bound.
    handles_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (i + kLookahead < n) dir.Prefetch(table.keys[i + kLookahead]);
      handles_[i] = dir.FindOrAdd(table.keys[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      if (i + kLookahead < n) dir.PrefetchRow(handles_[i + kLookahead]);
      const uint32_t handle = handles_[i];
      RowState& row = dir.at(handle);
      if (row.seen_by_build != build) {
        row.seen_by_build = build;
        row.batch_id = static_cast<uint32_t>(keys_.size());
        row.pin_stamp = iteration + 1;
        keys_.push_back(table.keys[i]);
        rows_.push_back(handle);
        uses_.push_back(0);
      }
      ids[i] = row.batch_id;
      ++uses_[row.batch_id];
    }
    offsets_[t] = table.offsets;
    begin_.push_back(static_cast<uint32_t>(keys_.size()));
  }
}

}  // namespace herald::scheduler
