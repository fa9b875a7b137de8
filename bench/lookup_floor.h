#pragma once
// A baseline for the planner's time per global batch: the least work any
// planner does that keeps per-row state (who caches a row, who holds its
// newest version) behind a hash index of the keys, as the issue's own
// description of the scheduler requires. Per batch it resolves every key to
// its row (abseil flat_hash_map, prefetching a few keys ahead, a new row
// for an unseen key) and reads and stamps each row's 64-byte record once —
// the one read a location-aware allocation must make per use. Nothing is
// planned. It keeps a row for every key seen (no eviction), so its index is
// at least as large as a planner's.
//
// Single-threaded. Memory: one record per distinct key of the batches.

#include <vector>

#include "common/data/key_batch.h"

namespace herald::bench {

struct FloorTimes {
  double median_ms = 0;
  double p99_ms = 0;
};

// Times each batch of `batches` in order, on the calling thread.
FloorTimes TimeLookupFloor(const std::vector<data::KeyBatch>& batches);

}  // namespace herald::bench
