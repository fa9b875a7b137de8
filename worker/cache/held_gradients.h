#pragma once
// Policy het's gradients held in the cache (docs/policies.md): a slot the
// plan lists under hold adds its step's gradient to what it holds and is
// trained as an owned row; the held sum goes to the PS with the push when
// the plan pushes, flushes or evicts the slot. Rows of a table that never
// held gradients cost nothing here. Not thread-safe.

#include <cstdint>
#include <vector>

#include "plan/step.h"
#include "ps_server/client/ps_client.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/slot_transfer.h"
#include "worker/cache/step_result.h"
#include "worker/device/device_array.h"

namespace herald::worker {

class HeldGradients {
 public:
  // Nothing is owned.
  HeldGradients(Device* device, EmbeddingCache* cache, SlotTransfer* transfer);

  // The held gradients of each table's `listed` slots that hold some
  // (plan::TablePlan::evict or ::flush), read and zeroed; flushed slots
  // are stale afterwards.
  std::vector<ps::TableGrads> Collect(const plan::Step& step,
                                      plan::SlotRows plan::TablePlan::*listed, StepResult* result);
  // The held gradients of slots[t] of each table t, read in one transfer
  // and zeroed on the device.
  std::vector<std::vector<float>> Take(const std::vector<std::vector<uint32_t>>& slots);
  // Each hold slot's gradient added to what it holds, and the slots'
  // optimizer updates appended to `updates` (valid until the next call).
  void Hold(const plan::Step& step, std::vector<Device::RowUpdateTable>* updates);

 private:
  Device* device_;
  EmbeddingCache* cache_;
  SlotTransfer* transfer_;
  DeviceArray<uint32_t> hold_slots_;  // every table's hold list
};

}  // namespace herald::worker
