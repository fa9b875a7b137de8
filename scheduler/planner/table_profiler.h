#pragma once
// herald-adaptive's table profiler: keeps each table's degree of infrequency
// (DoI) current and chooses the k tables the location-aware allocator
// scores, so that the planner's time per batch fits a budget.
//
// DoI (the paper's §4.3): an embedding is infrequently accessed when its
// popularity is below the samples one worker trains; a table's DoI is the
// share of its in-cache embeddings that are. Here, over the batches observed
// since the last ranking, per table: of the distinct rows each batch uses
// that some worker caches, the share whose popularity so far (a count-min
// sketch of every observed use, fixed memory) is below the samples per
// worker so far. (The paper counts each cached row once; this counts rows as
// batches use them, which weighs the rows scoring can act on.) Tables with
// no cached row in the window keep their DoI; before any, DoI = 1.
//
// Choice of k: tables are ranked by DoI (highest first, lower index among
// equals) every `profile_every` observed batches. With top_k > 0, the first
// top_k are scored. Otherwise k is the largest count whose predicted
// planning time fits budget_ms, with a cost model rather than a clock so
// that the same job plans the same, bit for bit:
//   predicted ns = base_ns_per_use × key uses of the batch
//                + score_ns_per_use × Σ over the k tables of their scorable uses
// (scorable: uses of rows used at most W times in the batch, the ones the
// allocator scores; per table, the average over the window). The defaults
// were measured on dev-2c (docs/benchmarks.md).
//
// The profiler runs in the planner's call, before each allocation, with its
// tables on the planner's threads (its cost is part of the measured planning
// time). It is not asynchronous on purpose: a profiler on its own thread
// would rank from a view that lags by however far it fell behind, and the
// same job must plan the same, bit for bit. Memory: num_tables × 2 ×
// sketch_width counters.

#include <cstdint>
#include <vector>

#include "common/state_io.h"
#include "scheduler/planner/batch_index.h"
#include "scheduler/planner/row_directory.h"
#include "scheduler/planner/table_runner.h"

namespace herald::scheduler {

struct AdaptiveOptions {
  uint32_t top_k = 0;    // > 0: score the top_k highest-DoI tables
  double budget_ms = 0;  // top_k == 0: the planning time per batch to fit
  uint32_t profile_every = 8;
  double base_ns_per_use = 140;
  double score_ns_per_use = 60;
  uint32_t sketch_width = 1u << 15;  // counters per sketch row, a power of two
};

class TableProfiler {
 public:
  TableProfiler(uint32_t num_tables, uint32_t num_workers, const AdaptiveOptions& options);

  // Counts the uses of `index` (the next batch to be allocated), measures
  // its cached rows' infrequency, and re-ranks the tables when due.
  // Tables are observed on `run`'s threads (each touches only its own
  // sketch and counters: the result is the same for any number).
  void Observe(const BatchIndex& index, const std::vector<RowDirectory>& directory,
               const TableRunner& run = TableRunner());

  // Per table: scored by the allocator.
  const std::vector<bool>& scored() const { return scored_; }
  uint32_t k() const { return k_; }
  double doi(uint32_t table) const { return doi_[table]; }
  // The cost model's prediction for the current choice, from the window's
  // averages (ms).
  double predicted_ms() const { return predicted_ms_; }
  // False when a budget (top_k 0) is below even the prediction with no
  // table scored (the planner's base cost), so none is; true with top_k.
  bool budget_reachable() const {
    return options_.top_k > 0 || k_ > 0 || predicted_ms_ <= options_.budget_ms;
  }

  // Writes the profiler's state (Planner::SaveState). Load reads it back
  // into a profiler made with the same tables and options, replacing its
  // state; false (in->status() names the field) for a stream that does
  // not fit.
  void Save(StateWriter* out) const;
  bool Load(StateReader* in);

 private:
  uint32_t Estimate(uint32_t table, Key key) const;
  void Add(uint32_t table, Key key, uint32_t count);
  void Rank();

  uint32_t num_tables_, num_workers_;
  AdaptiveOptions options_;
  std::vector<uint32_t> sketch_;  // [table][2][width]
  uint64_t batches_ = 0, samples_ = 0;
  // The window since the last ranking, per table.
  std::vector<uint64_t> cached_rows_, infrequent_rows_, scorable_uses_, uses_;
  uint64_t window_batches_ = 0;
  std::vector<double> doi_;
  std::vector<bool> scored_;
  uint32_t k_ = 0;
  double predicted_ms_ = 0;
};

}  // namespace herald::scheduler
