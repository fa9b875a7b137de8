#pragma once
// The worker's embedding cache: per table, a slot array of rows on the
// device (values followed by the row's optimizer state, so a row moves with
// its state and an exclusive owner updates it exactly as the PS would), a
// same-shaped gradient array (`dim` floats per slot, all zero between
// steps), and host bookkeeping of which key each slot holds and in which
// state. Slots are assigned by the scheduler's plans, never by the worker.

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "common/math/sparse_optimizer.h"
#include "worker/device/device_array.h"

namespace herald::worker {

enum class SlotState : uint8_t {
  kEmpty,
  kClean,   // equals the PS's copy as of its fetch
  kDirty,   // newer than the PS: this worker holds the newest version
  kStale,   // its gradients went to the PS (or the owner); the newest version is there
  kServed,  // a copy of the values another worker holds dirty, to train on;
            // its gradients go to that worker (the optimizer state is not sent)
  kHeld,    // policy het: trained here, its gradients since the fetch held in
            // `held`; they go to the PS when the plan pushes, flushes or
            // evicts the slot
};

const char* SlotStateName(SlotState state);

struct CacheTableConfig {
  uint32_t dim = 0;
  math::SparseOptimizerConfig optimizer;
  uint32_t slots = 0;  // cache capacity + per-iteration scratch
};

class EmbeddingCache {
 public:
  struct Table {
    uint32_t dim = 0;
    uint32_t row_floats = 0;
    uint32_t capacity = 0;
    math::SparseOptimizerConfig optimizer;
    DeviceArray<float> rows;   // capacity × row_floats
    DeviceArray<float> grads;  // capacity × dim
    // Policy het: capacity × dim, each kHeld slot's gradients since its
    // fetch, zero elsewhere; allocated at the first hold (HoldStorage).
    DeviceArray<float> held;
    bool HoldsGradients() const { return held.size() != 0; }
    std::vector<Key> keys;
    std::vector<SlotState> states;
    std::vector<uint64_t> versions;
    absl::flat_hash_map<Key, uint32_t> slot_of;  // non-empty slots
    uint64_t changes = 0;                        // of this table's bookkeeping (changes())
  };

  EmbeddingCache(Device* device, const std::vector<CacheTableConfig>& tables);

  size_t num_tables() const { return tables_.size(); }
  Table& table(size_t t) { return tables_[t]; }
  const Table& table(size_t t) const { return tables_[t]; }

  // Bookkeeping (the executor moves the data).
  void Evict(size_t t, uint32_t slot);
  void Load(size_t t, uint32_t slot, Key key, uint64_t version);  // -> clean
  // The same for many slots of table t (keys[i] and versions[i] go to
  // slots[i]). Calls on different tables may run at the same time
  // (table_parallel.h): each touches its own table only.
  void EvictSlots(size_t t, const std::vector<uint32_t>& slots);
  void LoadSlots(size_t t, const std::vector<uint32_t>& slots, const Key* keys,
                 const uint64_t* versions);
  void SetState(size_t t, uint32_t slot, SlotState state) {
    tables_[t].states[slot] = state;
    ++tables_[t].changes;
  }
  void BumpVersion(size_t t, uint32_t slot) {
    ++tables_[t].versions[slot];
    ++tables_[t].changes;
  }
  // The held-gradient array of table t, allocated (zeroed) on first use.
  DeviceArray<float>& HoldStorage(size_t t);

  // Grows with every change above: equal counts, the same bookkeeping.
  uint64_t changes() const;

  // Device bytes held (rows + gradients + held gradients).
  uint64_t DeviceBytes() const;
  // Non-empty slots of table t.
  size_t Resident(size_t t) const { return tables_[t].slot_of.size(); }

 private:
  Device* device_;
  std::vector<Table> tables_;
};

}  // namespace herald::worker
