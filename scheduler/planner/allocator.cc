#include "scheduler/planner/allocator.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace herald::scheduler {

void Allocator::Allocate(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                         CounterRng* rng, std::vector<uint32_t>* worker_of, const TableRunner& run,
                         const TableRunner::SideWork& side) {
  const uint32_t n = index.num_samples();
  worker_of->resize(n);
  if (kind_ == Allocation::kLocality) {
    Locality(index, directory, rng, worker_of, run, side);
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
  run.ForEach(side.items, side.fn);
}

void Allocator::Locality(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                         CounterRng* rng, std::vector<uint32_t>* worker_of, const TableRunner& run,
                         const TableRunner::SideWork& side) {
  if (num_workers_ <= 64) {
    LocalityIn<1>(index, directory, rng, worker_of, run, side, &rows1_);
  } else if (num_workers_ <= 128) {
    LocalityIn<2>(index, directory, rng, worker_of, run, side, &rows2_);
  } else {
    LocalityIn<4>(index, directory, rng, worker_of, run, side, &rows4_);
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
      if (id + 8 < index.begin(t + 1)) dir.PrefetchRow(index.row(id + 8));  // a few rows ahead
      scored_of_[id] = kUnscored;
      if (!scored_table) continue;
      const uint32_t uses = index.uses(id);
      if (uses > hot_uses) continue;
      const uint32_t handle = index.row(id);
      const RowState& row = dir.at(handle);
      const BasicWorkerSet<kWords> newest = dir.Newest<kWords>(handle);
      const bool is_cached = !newest.Empty();
      if (uses == 1 && !is_cached && row.holder == kPsHolder) continue;
      scored_of_[id] = next | (uint32_t{is_cached} << kCachedBit);
      (*rows)[next] = {BasicWorkerSet<kWords>(), newest, row.holder, is_cached};
      ++next;
    }
  });
}

void Allocator::IndexSamplesOfRows(uint32_t num_samples, uint32_t num_rows) {
  row_start_.assign(num_rows + 1, 0);
  for (uint32_t scored : scored_ids_) ++row_start_[scored + 1];
  for (uint32_t r = 0; r < num_rows; ++r) row_start_[r + 1] += row_start_[r];
  row_fill_.assign(row_start_.begin(), row_start_.end() - 1);
  row_samples_.resize(scored_ids_.size());
  for (uint32_t s = 0; s < num_samples; ++s) {
    for (uint32_t i = scored_offsets_[s]; i < scored_offsets_[s + 1]; ++i) {
      row_samples_[row_fill_[scored_ids_[i]]++] = s;
    }
  }
}

bool Allocator::UsedByAnotherOn(uint32_t scored, uint32_t s, uint32_t w,
                                const std::vector<uint32_t>& worker_of) const {
  for (uint32_t i = row_start_[scored]; i < row_start_[scored + 1]; ++i) {
    const uint32_t other = row_samples_[i];
    if (other != s && worker_of[other] == w) return true;
  }
  return false;
}

template <int kWords>
void Allocator::LocalityIn(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                           CounterRng* rng, std::vector<uint32_t>* worker_of,
                           const TableRunner& run, const TableRunner::SideWork& side,
                           std::vector<ScoredRow<kWords>>* rows) {
  const uint32_t W = num_workers_;
  ScoreIds(index, directory, run, rows);
  load_.assign(W, 0);
  quota_.resize(W);
  closed_cost_.assign(W, 0);
  for (uint32_t w = 0; w < W; ++w) {
    quota_[w] = Quota(index.num_samples(), w);
    if (quota_[w] == 0) closed_cost_[w] = kClosed;
  }
  cost_.resize(W);
  const bool ownership = sync_ == SyncMode::kOwnership;
  // Each sample's scored numbers, as CSR, built in chunks of samples on
  // the planner's threads (chunk boundaries do not depend on their number).
  const uint32_t n = index.num_samples();
  constexpr uint32_t kChunk = 1024;
  constexpr uint32_t kSamplesPerLine = 16, kPrefetchSamples = 64;
  const uint32_t num_chunks = (n + kChunk - 1) / kChunk;
  std::vector<uint32_t> cached(n, 0);
  chunk_ids_.resize(num_chunks);
  scored_offsets_.assign(n + 1, 0);
  // Per table, its offsets and ids as raw pointers: this runs per
  // (sample, table), and the vectors would be reloaded after every store.
  const uint32_t num_tables = index.num_tables();
  table_offsets_.resize(num_tables);
  table_ids_.resize(num_tables);
  for (uint32_t t = 0; t < num_tables; ++t) {
    table_offsets_[t] = index.offsets(t).data();
    table_ids_[t] = index.ids(t).data();
  }
  run.ForEach(num_chunks, [&](uint32_t c) {
    std::vector<uint32_t>& out = chunk_ids_[c];
    out.clear();
    const uint32_t* const* offsets_of = table_offsets_.data();
    const uint32_t* const* ids_of = table_ids_.data();
    const uint32_t* scored_of = scored_of_.data();
    for (uint32_t s = c * kChunk; s < std::min(n, (c + 1) * kChunk); ++s) {
      // Sample by sample, this reads two sequential arrays per table: more
      // streams than the hardware prefetcher follows, so each line would be
      // a miss. Start the tables' lines a few dozen samples ahead, one line's
      // worth of samples at a time (ids from offsets read a line earlier).
      if (s % kSamplesPerLine == 0 && s + kPrefetchSamples < n) {
        for (uint32_t t = 0; t < num_tables; ++t) {
          __builtin_prefetch(offsets_of[t] + s + kPrefetchSamples);
          __builtin_prefetch(ids_of[t] + offsets_of[t][s + kPrefetchSamples - kSamplesPerLine]);
        }
      }
      uint32_t cached_rows = 0;
      for (uint32_t t = 0; t < num_tables; ++t) {
        const uint32_t* offsets = offsets_of[t];
        const uint32_t* ids = ids_of[t];
        for (uint32_t i = offsets[s], end = offsets[s + 1]; i < end; ++i) {
          const uint32_t scored = scored_of[ids[i]];
          if (scored == kUnscored) continue;
          out.push_back(scored & ~(uint32_t{1} << kCachedBit));
          cached_rows += scored >> kCachedBit;
        }
      }
      cached[s] = cached_rows;
      scored_offsets_[s + 1] = static_cast<uint32_t>(out.size());  // within the chunk
    }
  });
  scored_ids_.clear();
  for (uint32_t c = 0; c < num_chunks; ++c) {
    const uint32_t base = static_cast<uint32_t>(scored_ids_.size());
    for (uint32_t s = c * kChunk; s < std::min(n, (c + 1) * kChunk); ++s) {
      scored_offsets_[s + 1] += base;
    }
    scored_ids_.insert(scored_ids_.end(), chunk_ids_[c].begin(), chunk_ids_[c].end());
  }
  // Samples with the most cached rows choose first, before quotas fill;
  // equals in batch order. A counting sort: the counts are small.
  uint32_t most = 0;
  for (uint32_t c : cached) most = std::max(most, c);
  start_of_count_.assign(most + 2, 0);
  for (uint32_t c : cached) ++start_of_count_[most - c + 1];  // most cached first
  for (uint32_t i = 1; i < start_of_count_.size(); ++i) {
    start_of_count_[i] += start_of_count_[i - 1];
  }
  std::vector<uint32_t> order(n);
  constexpr uint32_t kRowsAhead = 2, kIdsAhead = 8;
  for (uint32_t s = 0; s < n; ++s) order[start_of_count_[most - cached[s]]++] = s;
  // One greedy pass over the samples in `order`. Refining, each sample
  // first leaves its worker of the previous pass, so it is placed against
  // every other sample's current worker (later samples' from that pass).
  auto place = [&](bool refine) {
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t s = order[k];
      // Later samples' rows are random reads: start them a few samples ahead
      // (their scored numbers further ahead still, as the rows need them).
      if (k + kRowsAhead < n) {
        const uint32_t ahead = order[k + kRowsAhead];
        for (uint32_t i = scored_offsets_[ahead]; i < scored_offsets_[ahead + 1]; ++i) {
          const ScoredRow<kWords>* row = &(*rows)[scored_ids_[i]];
          __builtin_prefetch(row);  // both lines, when the row straddles two
          __builtin_prefetch(reinterpret_cast<const char*>(row + 1) - 1);
        }
      }
      if (k + kIdsAhead < n) {
        const uint32_t ahead = order[k + kIdsAhead];
        __builtin_prefetch(&scored_offsets_[ahead]);
        __builtin_prefetch(scored_ids_.data() + scored_offsets_[ahead]);
      }
      if (refine) {  // take the sample off its worker of the previous pass
        const uint32_t old = (*worker_of)[s];
        for (uint32_t i = scored_offsets_[s]; i < scored_offsets_[s + 1]; ++i) {
          const uint32_t scored = scored_ids_[i];
          if (!UsedByAnotherOn(scored, s, old, *worker_of)) (*rows)[scored].users.Remove(old);
        }
      }
      std::copy(closed_cost_.begin(), closed_cost_.end(), cost_.begin());
      for (uint32_t i = scored_offsets_[s]; i < scored_offsets_[s + 1]; ++i) {
        const ScoredRow<kWords>& row = (*rows)[scored_ids_[i]];
        const BasicWorkerSet<kWords>& users = row.users;
        const uint32_t count = users.CountUpTo2();
        const int32_t sync = !ownership ? 1 : count == 0 ? 0 : count == 1 ? 2 : 1;
        const int32_t h = row.holder;
        // Costs are relative to a base every worker pays (1 + sync + writeback);
        // only the differences between workers matter. The write-back is
        // already paid when someone other than the dirty holder trains the row.
        const bool dirty_elsewhere =
            h != kPsHolder &&
            (count == 0 || (count == 1 && users.IsOnly(static_cast<uint32_t>(h))));
        const int32_t writeback = dirty_elsewhere ? 1 : 0;
        row.newest.ForEach([&](uint32_t w) {
          if (!users.Has(w)) cost_[w] -= 1;  // a hit: no fetch
        });
        if (writeback != 0 && !users.Has(static_cast<uint32_t>(h))) cost_[h] -= writeback;
        users.ForEach([&](uint32_t w) {
          // Already trains the row: nothing new. Undo what base charged.
          cost_[w] -= 1 + sync + writeback;
        });
      }
      // The cheapest workers with room (in increasing rank); one of them
      // uniformly at random (a full worker's cost starts at kClosed, far
      // above any other's).
      const uint32_t best = cheapest_.Pick(cost_.data(), W, rng);
      if (++load_[best] == quota_[best]) closed_cost_[best] = kClosed;
      (*worker_of)[s] = best;
      for (uint32_t i = scored_offsets_[s]; i < scored_offsets_[s + 1]; ++i) {
        (*rows)[scored_ids_[i]].users.Add(best);
      }
    }
  };
  // The serial part, with the caller's side work on the other threads.
  run.Beside(
      [&] {
        place(/*refine=*/false);
        for (uint32_t pass = 1; pass < passes_; ++pass) {
          if (pass == 1) IndexSamplesOfRows(n, static_cast<uint32_t>(rows->size()));
          load_.assign(W, 0);
          for (uint32_t w = 0; w < W; ++w) closed_cost_[w] = quota_[w] == 0 ? kClosed : 0;
          place(/*refine=*/true);
        }
      },
      side);
}

}  // namespace herald::scheduler
