#pragma once
// Which keys of one table may have been trained: a Bloom filter of fixed
// size, so the planner's memory stays independent of the dataset. No false
// negatives: a key added is always reported; a key never added is reported
// with a probability that grows with the keys added (about 2% at one key
// per 8 bits). The planner lets workers initialise a row themselves only
// when the filter says it was never trained (PlannerOptions::init_on_worker):
// a false positive only costs a fetch.
//
// Not thread-safe; the planner keeps one per table.

#include <cstdint>
#include <vector>

#include "common/ids.h"
#include "common/state_io.h"

namespace herald::scheduler {

class TrainedFilter {
 public:
  // `bits`: a power of two ≥ 64.
  explicit TrainedFilter(uint64_t bits);

  void Add(Key key);
  bool MayContain(Key key) const;
  uint64_t bits() const { return mask_ + 1; }

  // Writes the filter's bits (Planner::SaveState): its nonzero words with
  // their places while they are fewer than a third, else every word. Load
  // reads them back into a filter of the same size; false (in->status()
  // names the field) for a stream that does not fit.
  void Save(StateWriter* out) const;
  bool Load(StateReader* in);

 private:
  static constexpr int kHashes = 4;
  uint64_t mask_;
  std::vector<uint64_t> words_;
};

}  // namespace herald::scheduler
