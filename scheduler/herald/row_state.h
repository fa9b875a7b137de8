#pragma once
// Where a row's newest version lives, as the planner knows it. A row without
// an entry is held by the PS alone; entries exist only while some worker
// caches the row or holds it dirty, so memory follows the caches' size, not
// the dataset's.

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "scheduler/herald/worker_set.h"

namespace herald::scheduler {

constexpr int32_t kPsHolder = -1;

struct RowState {
  int32_t holder = kPsHolder;  // the PS, or the one worker holding it dirty
  WorkerSet resident;          // workers whose cache holds a copy
  WorkerSet newest;            // of those, the ones whose copy is the newest
};

using RowDirectory = absl::flat_hash_map<Key, RowState>;  // one per table

}  // namespace herald::scheduler
