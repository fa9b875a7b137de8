#pragma once
// The executor's phase 5b for jobs that serve rows from their owner
// (job spec scheduling.serve): the gradients of the served copies this
// worker trained on go to the rows' owners, and the gradients other
// trainers computed for the rows this worker owns come in; each owned
// row's gradient becomes every trainer's sum in rank order, as the PS
// would add them, ready for the owner's optimizer step. Every worker of
// the job calls Exchange once per step, whatever its plan lists.

#include <cstdint>

#include "absl/status/status.h"
#include "plan/step.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/slot_transfer.h"
#include "worker/cache/step_result.h"
#include "worker/collectives/row_exchanger.h"

namespace herald::worker {

class ServedGradients {
 public:
  // This worker is `rank`. Nothing is owned.
  ServedGradients(Device* device, EmbeddingCache* cache, SlotTransfer* transfer,
                  RowExchanger* exchanger, uint32_t rank, uint32_t num_workers);

  // Sends the gradients of the step's remote slots to their owners (zeroed
  // here; the slots are stale until their owner's update comes back) and
  // sums the ones received into the step's gather slots.
  absl::Status Exchange(const plan::Step& step, StepResult* result);

 private:
  EmbeddingCache* cache_;
  SlotTransfer* transfer_;
  RowExchanger* exchanger_;
  uint32_t rank_, num_workers_;
};

}  // namespace herald::worker
