#pragma once
// The executor's worker-to-worker rows (phase 10 of docs/worker.md): the
// rows a step's plan hands off to the workers training them next, and the
// served copies it sends, read from the cache and sent after the step; the
// rows handed to this worker, received and placed by its next step (the
// plan's receive list) as its dirty rows, or as served copies.
//
// With overlap the exchange runs on while the next step evicts and fetches
// (the rows sent were read from the cache first); the next step waits for
// it (Receive) before it places the rows. Every worker of the job calls the
// exchanger once per step. Not thread-safe.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "common/pending_call.h"
#include "common/thread_pool.h"
#include "plan/step.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/slot_transfer.h"
#include "worker/cache/step_result.h"
#include "worker/collectives/row_exchanger.h"

namespace herald::worker {

class HandOffs {
 public:
  // This worker is `rank` of `num_workers`. `exchanger` may be null (then
  // no plan may hand off or serve). `tables` (may be null): threads to place
  // the cache's bookkeeping of every table at once. Nothing is owned.
  HandOffs(EmbeddingCache* cache, SlotTransfer* transfer, RowExchanger* exchanger, uint32_t rank,
           uint32_t num_workers, bool overlap, ThreadPool* tables = nullptr);

  // Before anything changes: the step's hand-off and serving peers are
  // other workers of the job, and there is an exchanger if it needs one
  // (`serve`: the job serves rows, so every step exchanges).
  absl::Status CheckPeers(const plan::Step& step, bool serve) const;
  // True while the previous step's exchange may still be running.
  bool receiving() const { return exchange_.has_value(); }
  // Waits for the previous step's exchange and keeps the rows it brought.
  absl::Status Receive();
  // The step receives exactly the rows handed to this worker after the
  // previous step (checked before anything changes, or once Receive is done).
  absl::Status CheckReceived(const plan::Step& step) const;
  // Writes the received rows into the step's receive slots.
  absl::Status Place(const plan::Step& step);
  // Sends this step's hand-offs and served copies and starts receiving the
  // rows handed to this worker; without overlap, waits for them too.
  absl::Status Send(const plan::Step& step, StepResult* result);

 private:
  EmbeddingCache* cache_;
  SlotTransfer* transfer_;
  ThreadPool* tables_;
  RowExchanger* exchanger_;
  uint32_t rank_, num_workers_;
  bool overlap_;

  // Per table: rows other workers handed to this one after the last step
  // (values with optimizer state, and version), placed by the next step.
  struct ReceivedRow {
    std::vector<float> row;  // values with optimizer state; a served copy: values only
    uint64_t version = 0;
    bool served = false;
  };
  std::vector<absl::flat_hash_map<Key, ReceivedRow>> received_;
  // The last step's exchange, still running. Per table, the rows that
  // arrive: the plan's incoming lists and the row widths.
  struct Incoming {
    plan::PeerRows rows;
    uint32_t dim, row_floats;
  };
  struct Exchange {
    PendingCall<RowExchanger::Received> call;
    std::vector<Incoming> incoming;
  };
  std::optional<Exchange> exchange_;
};

}  // namespace herald::worker
