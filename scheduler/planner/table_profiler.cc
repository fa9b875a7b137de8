#include "scheduler/planner/table_profiler.h"

#include <algorithm>
#include <numeric>

#include "common/rng.h"

namespace herald::scheduler {

TableProfiler::TableProfiler(uint32_t num_tables, uint32_t num_workers,
                             const AdaptiveOptions& options)
    : num_tables_(num_tables),
      num_workers_(num_workers),
      options_(options),
      sketch_(size_t{num_tables} * 2 * options.sketch_width, 0),
      cached_rows_(num_tables, 0),
      infrequent_rows_(num_tables, 0),
      scorable_uses_(num_tables, 0),
      uses_(num_tables, 0),
      doi_(num_tables, 1.0),
      scored_(num_tables, true),
      k_(num_tables) {}

uint32_t TableProfiler::Estimate(uint32_t table, Key key) const {
  const uint64_t h = Mix64(key ^ (uint64_t{table} << 56));
  const size_t mask = options_.sketch_width - 1;
  const size_t base = size_t{table} * 2 * options_.sketch_width;
  return std::min(sketch_[base + (h & mask)],
                  sketch_[base + options_.sketch_width + ((h >> 32) & mask)]);
}

void TableProfiler::Add(uint32_t table, Key key, uint32_t count) {
  // Conservative update: raise each counter only up to the new estimate.
  const uint64_t h = Mix64(key ^ (uint64_t{table} << 56));
  const size_t mask = options_.sketch_width - 1;
  const size_t base = size_t{table} * 2 * options_.sketch_width;
  uint32_t& a = sketch_[base + (h & mask)];
  uint32_t& b = sketch_[base + options_.sketch_width + ((h >> 32) & mask)];
  const uint32_t target = std::min(a, b) + count;
  a = std::max(a, target);
  b = std::max(b, target);
}

void TableProfiler::Observe(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                            const TableRunner& run) {
  ++batches_;
  ++window_batches_;
  samples_ += index.num_samples();
  // Samples one worker has trained so far (this batch included).
  const uint64_t per_worker = samples_ / num_workers_;
  run.ForEachTable(num_tables_, [&](uint32_t t) {  // only table t's state
    const RowDirectory& dir = directory[t];
    for (uint32_t id = index.begin(t); id < index.begin(t + 1); ++id) {
      const uint32_t uses = index.uses(id);
      uses_[t] += uses;
      if (uses <= num_workers_) scorable_uses_[t] += uses;
      Add(t, index.key(id), uses);
      if (!dir.IsCached(index.row(id))) continue;
      ++cached_rows_[t];
      infrequent_rows_[t] += Estimate(t, index.key(id)) < per_worker;
    }
  });
  if (window_batches_ >= options_.profile_every || batches_ == 1) Rank();
}

void TableProfiler::Rank() {
  for (uint32_t t = 0; t < num_tables_; ++t) {
    if (cached_rows_[t] > 0) {
      doi_[t] = static_cast<double>(infrequent_rows_[t]) / static_cast<double>(cached_rows_[t]);
    }
  }
  std::vector<uint32_t> order(num_tables_);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return doi_[a] > doi_[b]; });
  const double batches = static_cast<double>(window_batches_);
  const uint64_t uses = std::accumulate(uses_.begin(), uses_.end(), uint64_t{0});
  double ns = options_.base_ns_per_use * static_cast<double>(uses) / batches;
  uint32_t k = 0;
  if (options_.top_k > 0) {
    k = std::min(options_.top_k, num_tables_);
    for (uint32_t i = 0; i < k; ++i) {
      ns += options_.score_ns_per_use * static_cast<double>(scorable_uses_[order[i]]) / batches;
    }
  } else {
    const double budget_ns = options_.budget_ms * 1e6;
    while (k < num_tables_) {
      const double more =
          options_.score_ns_per_use * static_cast<double>(scorable_uses_[order[k]]) / batches;
      if (ns + more > budget_ns) break;
      ns += more;
      ++k;
    }
  }
  scored_.assign(num_tables_, false);
  for (uint32_t i = 0; i < k; ++i) scored_[order[i]] = true;
  k_ = k;
  predicted_ms_ = ns / 1e6;
  std::fill(cached_rows_.begin(), cached_rows_.end(), 0);
  std::fill(infrequent_rows_.begin(), infrequent_rows_.end(), 0);
  std::fill(scorable_uses_.begin(), scorable_uses_.end(), 0);
  std::fill(uses_.begin(), uses_.end(), 0);
  window_batches_ = 0;
}

void TableProfiler::Save(StateWriter* out) const {
  out->Vec(sketch_);
  out->Pod(batches_);
  out->Pod(samples_);
  out->Vec(cached_rows_);
  out->Vec(infrequent_rows_);
  out->Vec(scorable_uses_);
  out->Vec(uses_);
  out->Pod(window_batches_);
  out->Vec(doi_);
  out->Vec(scored_);
  out->Pod(k_);
  out->Pod(predicted_ms_);
}

bool TableProfiler::Load(StateReader* in) {
  TableProfiler read(*this);
  if (!in->Vec("profiler.sketch", &read.sketch_) || !in->Pod("profiler.batches", &read.batches_) ||
      !in->Pod("profiler.samples", &read.samples_) ||
      !in->Vec("profiler.cached_rows", &read.cached_rows_) ||
      !in->Vec("profiler.infrequent_rows", &read.infrequent_rows_) ||
      !in->Vec("profiler.scorable_uses", &read.scorable_uses_) ||
      !in->Vec("profiler.uses", &read.uses_) ||
      !in->Pod("profiler.window_batches", &read.window_batches_) ||
      !in->Vec("profiler.doi", &read.doi_) || !in->Vec("profiler.scored", &read.scored_) ||
      !in->Pod("profiler.k", &read.k_) || !in->Pod("profiler.predicted_ms", &read.predicted_ms_)) {
    return false;
  }
  if (read.sketch_.size() != sketch_.size() || read.cached_rows_.size() != num_tables_ ||
      read.infrequent_rows_.size() != num_tables_ || read.scorable_uses_.size() != num_tables_ ||
      read.uses_.size() != num_tables_ || read.doi_.size() != num_tables_ ||
      read.scored_.size() != num_tables_ || read.k_ > num_tables_) {
    return in->Invalid("profiler", "not the profiler of this planner's tables and options");
  }
  *this = std::move(read);
  return true;
}

}  // namespace herald::scheduler
