#pragma once
// Input allocation: which worker trains each sample of a global batch. Every
// worker gets an equal share (B·(w+1)/W − B·w/W samples).
//
// kLocality is Herald's location-aware allocation, with the paper's score
// (rows of the sample whose newest version the worker caches) extended to the
// whole cost of a choice: for each row of sample s given to worker w,
//   fetch   1 unless w caches the newest version or already trains the row in
//           this batch,
//   sync    ownership: 0 if no other worker trains the row in this batch
//           (w may own it), 2 if exactly one other does (both must now push),
//           1 if several do; through-PS: 1 per (row, worker) pair,
//   write-back 1 if another worker holds the row dirty and no other worker
//           already forces that write-back.
// Rows used by more than W samples of the batch are left out of the cost (they
// land on most workers whatever the choice). Samples are taken in decreasing
// order of their rows cached anywhere (batch order among equals), each given
// to the cheapest worker with room; ties are broken uniformly at random
// (seeded, so the same job plans the same). Measured against the paper's
// plain score in docs/benchmarks.md.
//
// With passes > 1, each further pass takes the samples again in the same
// order, every worker's load back at zero, and moves each to the cheapest
// worker with room given every other sample's current worker: those placed
// earlier in this pass, and the later ones where the previous pass put
// them. So a sample sees the rows it shares with samples after it, which
// the first pass could not.

#include <cstdint>
#include <utility>
#include <vector>

#include "common/rng.h"
#include "scheduler/planner/batch_index.h"
#include "scheduler/planner/cheapest_worker.h"
#include "scheduler/planner/policy.h"
#include "scheduler/planner/row_directory.h"
#include "scheduler/planner/table_runner.h"

namespace herald::scheduler {

class Allocator {
 public:
  // passes ≥ 1 (kLocality; see the file comment). REQUIRES: passes ≥ 1.
  Allocator(Allocation kind, SyncMode sync, uint32_t num_workers, uint32_t passes = 1)
      : kind_(kind), sync_(sync), num_workers_(num_workers), passes_(passes) {}

  // worker_of[s] for every sample of the indexed batch. `directory` (one per
  // table) is the state the batch will be trained from. kLocality reads the
  // tables on `run`'s threads (the result is the same for any number); the
  // greedy choice itself is serial, and `side` (the caller's work, which
  // must touch nothing the greedy reads or writes: neither the index nor
  // this allocator) runs on the other threads meanwhile. Other kinds run
  // `side` on `run` after allocating. Either way it is done on return.
  void Allocate(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                CounterRng* rng, std::vector<uint32_t>* worker_of,
                const TableRunner& run = TableRunner(), const TableRunner::SideWork& side = {});

  // kLocality scores only the tables marked true (herald-adaptive); empty:
  // every table. A sample whose scored tables give no worker an advantage
  // goes to a random worker with room.
  void SetScoredTables(std::vector<bool> scored) { scored_tables_ = std::move(scored); }

  static constexpr int32_t kClosed = CheapestWorker::kClosed;

 private:
  // What the greedy loop reads of a scored row, in as few words as the
  // job's workers need (one cache line up to 64 workers).
  template <int kWords>
  struct ScoredRow {
    BasicWorkerSet<kWords> users;   // workers given a sample using the row so far
    BasicWorkerSet<kWords> newest;  // workers caching its newest version
    int32_t holder;                 // the worker holding it dirty, or kPsHolder
    bool cached;                    // some worker caches its newest version
  };

  void Locality(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                CounterRng* rng, std::vector<uint32_t>* worker_of, const TableRunner& run,
                const TableRunner::SideWork& side);
  template <int kWords>
  void LocalityIn(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                  CounterRng* rng, std::vector<uint32_t>* worker_of, const TableRunner& run,
                  const TableRunner::SideWork& side, std::vector<ScoredRow<kWords>>* rows);
  // Fills scored_of_ (kUnscored or the id's number among the scored ids,
  // flagged when some worker caches the row) and the scored rows.
  template <int kWords>
  void ScoreIds(const BatchIndex& index, const std::vector<RowDirectory>& directory,
                const TableRunner& run, std::vector<ScoredRow<kWords>>* rows);
  // Refining passes: which samples use each scored row (CSR by scored
  // number, from scored_offsets_ and scored_ids_).
  void IndexSamplesOfRows(uint32_t num_samples, uint32_t num_rows);
  // Whether a sample other than s using the scored row is on worker w.
  bool UsedByAnotherOn(uint32_t scored, uint32_t s, uint32_t w,
                       const std::vector<uint32_t>& worker_of) const;
  uint32_t Quota(uint32_t num_samples, uint32_t w) const {
    return static_cast<uint32_t>(uint64_t{num_samples} * (w + 1) / num_workers_ -
                                 uint64_t{num_samples} * w / num_workers_);
  }

  Allocation kind_;
  SyncMode sync_;
  uint32_t num_workers_;
  uint32_t passes_;
  std::vector<bool> scored_tables_;
  static constexpr uint32_t kUnscored = UINT32_MAX;
  // Scratch reused across batches. Per batch-local id: its scored number
  // (the ids whose choice can matter, numbered densely within each table so
  // the greedy loop reads small arrays) | cached << kCachedBit, or
  // kUnscored. Per scored number: its row, in the width the job needs.
  std::vector<uint32_t> scored_of_;
  static constexpr int kCachedBit = 31;
  std::vector<ScoredRow<1>> rows1_;
  std::vector<ScoredRow<2>> rows2_;
  std::vector<ScoredRow<4>> rows4_;
  // A sample's cost per worker starts from closed_cost_: 0 for a worker
  // with room left, kClosed (more than any sample's rows can take off) for
  // one whose share is full.
  std::vector<int32_t> cost_, closed_cost_;
  std::vector<uint32_t> load_, quota_;
  CheapestWorker cheapest_;
  std::vector<uint32_t> start_of_count_;                    // the samples' order by cached rows
  std::vector<uint32_t> scored_offsets_, scored_ids_;       // per sample, CSR of scored numbers
  std::vector<const uint32_t*> table_offsets_, table_ids_;  // per table, while allocating
  std::vector<std::vector<uint32_t>> chunk_ids_;            // scored_ids_ of each chunk of samples
  std::vector<uint32_t> row_start_, row_fill_, row_samples_;  // IndexSamplesOfRows
};

}  // namespace herald::scheduler
