#include "scheduler/herald/allocator.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace herald::scheduler {

void Allocator::Allocate(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                         CounterRng* rng, std::vector<uint32_t>* worker_of,
                         const TableRunner& run) {
  const uint32_t n = index.num_samples();
  worker_of->resize(n);
  if (kind_ == Allocation::kLocality) {
    Locality(index, directory, rng, worker_of, run);
    return;
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (kind_ == Allocation::kRandom) {
    for (uint32_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng->NextBelow(i)]);
  }
  for (uint32_t i = 0; i < n; ++i) {
    (*worker_of)[order[i]] = static_cast<uint32_t>(uint64_t{i} * num_workers_ / n);
  }
}

void Allocator::Locality(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                         CounterRng* rng, std::vector<uint32_t>* worker_of,
                         const TableRunner& run) {
  if (num_workers_ <= 64) {
    LocalityIn<1>(index, directory, rng, worker_of, run, &rows1_);
  } else if (num_workers_ <= 128) {
    LocalityIn<2>(index, directory, rng, worker_of, run, &rows2_);
  } else {
    LocalityIn<4>(index, directory, rng, worker_of, run, &rows4_);
  }
}

template <int kWords>
void Allocator::ScoreIds(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                         const TableRunner& run, std::vector<ScoredRow<kWords>>* rows) {
  // Rows used by more samples of the batch than there are workers end up on
  // most workers whatever the allocation does; they only add noise. A row
  // used once, cached nowhere and not dirty costs every worker the same.
  // The rest are "scored", numbered from begin(t) up within each table.
  const uint32_t hot_uses = num_workers_;
  const uint32_t num_ids = index.num_ids();
  scored_of_.resize(num_ids);
  rows->resize(num_ids);
  run.ForEachTable(index.num_tables(), [&](uint32_t t) {
    const bool scored_table = scored_tables_.empty() || scored_tables_[t];
    const RowDirectory& dir = directory[t];
    uint32_t next = index.begin(t);
    for (uint32_t id = index.begin(t); id < index.begin(t + 1); ++id) {
      scored_of_[id] = kUnscored;
      if (!scored_table) continue;
      const uint32_t uses = index.uses(id);
      if (uses > hot_uses) continue;
      const RowState& row = dir.at(index.row(id));
      const bool is_cached = !row.newest.Empty();
      if (uses == 1 && !is_cached && row.holder == kPsHolder) continue;
      scored_of_[id] = next;
      (*rows)[next] = {BasicWorkerSet<kWords>(), row.newest.template Narrow<kWords>(), row.holder,
                       is_cached};
      ++next;
    }
  });
}

template <int kWords>
void Allocator::LocalityIn(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                           CounterRng* rng, std::vector<uint32_t>* worker_of,
                           const TableRunner& run, std::vector<ScoredRow<kWords>>* rows) {
  const uint32_t W = num_workers_;
  ScoreIds(index, directory, run, rows);
  load_.assign(W, 0);
  quota_.resize(W);
  for (uint32_t w = 0; w < W; ++w) quota_[w] = Quota(index.num_samples(), w);
  cost_.resize(W);
  const bool ownership = sync_ == SyncMode::kOwnership;
  // Each sample's scored numbers, as CSR.
  const uint32_t n = index.num_samples();
  std::vector<uint32_t> cached(n, 0);
  scored_offsets_.assign(n + 1, 0);
  scored_ids_.clear();
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t t = 0; t < index.num_tables(); ++t) {
      const std::vector<uint32_t>& offsets = index.offsets(t);
      const std::vector<uint32_t>& ids = index.ids(t);
      for (uint32_t i = offsets[s]; i < offsets[s + 1]; ++i) {
        const uint32_t scored = scored_of_[ids[i]];
        if (scored == kUnscored) continue;
        scored_ids_.push_back(scored);
        cached[s] += (*rows)[scored].cached;
      }
    }
    scored_offsets_[s + 1] = static_cast<uint32_t>(scored_ids_.size());
  }
  // Samples with the most cached rows choose first, before quotas fill.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return cached[a] > cached[b]; });
  for (uint32_t s : order) {
    std::fill(cost_.begin(), cost_.end(), 0);
    for (uint32_t i = scored_offsets_[s]; i < scored_offsets_[s + 1]; ++i) {
      const ScoredRow<kWords>& row = (*rows)[scored_ids_[i]];
      const BasicWorkerSet<kWords>& users = row.users;
      const uint32_t count = users.CountUpTo2();
      const int64_t sync = !ownership ? 1 : count == 0 ? 0 : count == 1 ? 2 : 1;
      const int32_t h = row.holder;
      // Costs are relative to a base every worker pays (1 + sync + writeback);
      // only the differences between workers matter. The write-back is
      // already paid when someone other than the dirty holder trains the row.
      const bool dirty_elsewhere =
          h != kPsHolder && (count == 0 || (count == 1 && users.IsOnly(static_cast<uint32_t>(h))));
      const int64_t writeback = dirty_elsewhere ? 1 : 0;
      row.newest.ForEach([&](uint32_t w) {
        if (!users.Has(w)) cost_[w] -= 1;  // a hit: no fetch
      });
      if (writeback != 0 && !users.Has(static_cast<uint32_t>(h))) cost_[h] -= writeback;
      users.ForEach([&](uint32_t w) {
        // Already trains the row: nothing new. Undo what base charged.
        cost_[w] -= 1 + sync + writeback;
      });
    }
    // The cheapest workers with room; one of them uniformly at random.
    int64_t least = INT64_MAX;
    cheapest_.clear();
    for (uint32_t w = 0; w < W; ++w) {
      if (load_[w] >= quota_[w] || cost_[w] > least) continue;
      if (cost_[w] < least) {
        least = cost_[w];
        cheapest_.clear();
      }
      cheapest_.push_back(w);
    }
    const uint32_t best = cheapest_.size() == 1
                              ? cheapest_[0]
                              : cheapest_[rng->NextBelow(static_cast<uint32_t>(cheapest_.size()))];
    ++load_[best];
    (*worker_of)[s] = best;
    for (uint32_t i = scored_offsets_[s]; i < scored_offsets_[s + 1]; ++i) {
      (*rows)[scored_ids_[i]].users.Add(best);
    }
  }
}

}  // namespace herald::scheduler
