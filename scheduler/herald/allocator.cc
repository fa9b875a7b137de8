#include "scheduler/herald/allocator.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace herald::scheduler {

void Allocator::Allocate(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                         CounterRng* rng, std::vector<uint32_t>* worker_of) {
  const uint32_t n = index.num_samples();
  worker_of->resize(n);
  if (kind_ == Allocation::kLocality) {
    Locality(index, directory, rng, worker_of);
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
                         CounterRng* rng, std::vector<uint32_t>* worker_of) {
  const uint32_t W = num_workers_;
  const uint32_t num_ids = index.num_ids();
  users_.assign(num_ids, WorkerSet());
  newest_.assign(num_ids, WorkerSet());
  holder_.assign(num_ids, kPsHolder);
  auto scored_table = [&](uint32_t t) { return scored_tables_.empty() || scored_tables_[t]; };
  for (uint32_t t = 0; t < index.num_tables(); ++t) {
    if (!scored_table(t)) continue;
    const RowDirectory& dir = directory[t];
    for (uint32_t id = index.begin(t); id < index.begin(t + 1); ++id) {
      const RowState& row = dir.at(index.row(id));
      newest_[id] = row.newest;
      holder_[id] = row.holder;
    }
  }
  load_.assign(W, 0);
  quota_.resize(W);
  for (uint32_t w = 0; w < W; ++w) quota_[w] = Quota(index.num_samples(), w);
  cost_.resize(W);
  const bool ownership = sync_ == SyncMode::kOwnership;
  // Rows used by more samples of the batch than there are workers end up on
  // most workers whatever the allocation does; they only add noise. A row
  // used once, cached nowhere and not dirty costs every worker the same.
  // Each sample's remaining ("scored") ids, as CSR.
  const uint32_t hot_uses = W;
  const uint32_t n = index.num_samples();
  std::vector<uint32_t> cached(n, 0);
  scored_offsets_.assign(n + 1, 0);
  scored_ids_.clear();
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t t = 0; t < index.num_tables(); ++t) {
      if (!scored_table(t)) continue;
      const std::vector<uint32_t>& offsets = index.offsets(t);
      const std::vector<uint32_t>& ids = index.ids(t);
      for (uint32_t i = offsets[s]; i < offsets[s + 1]; ++i) {
        const uint32_t id = ids[i];
        const uint32_t uses = index.uses(id);
        if (uses > hot_uses) continue;
        const bool is_cached = !newest_[id].Empty();
        if (uses == 1 && !is_cached && holder_[id] == kPsHolder) continue;
        scored_ids_.push_back(id);
        cached[s] += is_cached;
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
      const uint32_t id = scored_ids_[i];
      const WorkerSet& users = users_[id];
      const uint32_t count = users.CountUpTo2();
      const int64_t sync = !ownership ? 1 : count == 0 ? 0 : count == 1 ? 2 : 1;
      const int32_t h = holder_[id];
      // Costs are relative to a base every worker pays (1 + sync + writeback);
      // only the differences between workers matter. The write-back is
      // already paid when someone other than the dirty holder trains the row.
      const bool dirty_elsewhere =
          h != kPsHolder && (count == 0 || (count == 1 && users.IsOnly(static_cast<uint32_t>(h))));
      const int64_t writeback = dirty_elsewhere ? 1 : 0;
      newest_[id].ForEach([&](uint32_t w) {
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
    // Only scored ids' users are read.
    for (uint32_t i = scored_offsets_[s]; i < scored_offsets_[s + 1]; ++i) {
      users_[scored_ids_[i]].Add(best);
    }
  }
}

}  // namespace herald::scheduler
