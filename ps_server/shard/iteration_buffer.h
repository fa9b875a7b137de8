#pragma once
// What a shard has received for one iteration that is not yet committed:
// gradients per (row, worker), absolute rows written back, and which workers
// reported the iteration done. Applied to the tables at commit.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "common/ids.h"

namespace herald::ps {

// One worker's gradient for one row: `grad` indexes PendingStripe::grad_arena
// in units of `dim` floats.
struct Contribution {
  uint32_t worker;
  uint32_t grad;
};

struct PendingGrad {
  uint32_t row;  // row index in the stripe's EmbeddingTable
  absl::InlinedVector<Contribution, 2> contributions;
};

struct PendingWriteBack {
  uint32_t row;
  uint64_t version;
  uint32_t data;  // index into PendingStripe::write_back_arena, in rows
};

// Pending changes of one stripe of one table.
struct PendingStripe {
  absl::flat_hash_map<Key, uint32_t> grad_index;  // key -> grads[i]
  std::vector<PendingGrad> grads;
  std::vector<float> grad_arena;
  absl::flat_hash_map<Key, PendingWriteBack> write_backs;
  std::vector<float> write_back_arena;
  // Rows deleted after the write-backs and gradients (row expiry).
  std::vector<Key> expire;

  bool Changes(Key key) const { return grad_index.contains(key) || write_backs.contains(key); }
  // Empty again; the arenas keep their memory for the next iteration.
  void Clear() {
    grad_index.clear();
    grads.clear();
    grad_arena.clear();
    write_backs.clear();
    write_back_arena.clear();
    expire.clear();
  }
};

struct IterationBuffer {
  IterationBuffer(size_t num_tables, uint32_t stripes_per_table, uint32_t num_workers)
      : tables(num_tables, std::vector<PendingStripe>(stripes_per_table)),
        done(num_workers, false) {}

  std::vector<std::vector<PendingStripe>> tables;  // [table][stripe]
  std::vector<bool> done;                          // [worker]
  uint32_t done_count = 0;

  bool complete() const { return done_count == done.size(); }
  // Some stripe has keys to expire (set where they are added).
  bool has_expiries = false;
  // As constructed, keeping the arenas' memory (JobShard reuses a committed
  // iteration's buffer for a later one: no fresh pages every iteration).
  void Reset() {
    for (auto& table : tables) {
      for (PendingStripe& stripe : table) stripe.Clear();
    }
    std::fill(done.begin(), done.end(), false);
    done_count = 0;
    has_expiries = false;
  }
};

}  // namespace herald::ps
