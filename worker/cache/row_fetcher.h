#pragma once
// The executor's fetch phase: the rows a step's plan fetches from the PS
// and the rows it initialises, placed into their cache slots on the device,
// with the cache told which key each slot now holds.
//
// Fetched rows land in the device's host memory (page-locked on a GPU),
// straight from the PS client (ps::RowSink), and go to the device in one
// copy per fetch. A plan's fetches marked early may be requested during the
// step before (Prefetch); the step's Fetch then only places them. Three
// fetch buffers are taken in turn: at most two fetches fill buffers at once
// (the current step's and the next one's early fetch), and a buffer the
// device may still read is refilled only after a wait for the device.
// Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "common/pending_call.h"
#include "common/thread_pool.h"
#include "plan/step.h"
#include "ps_server/client/ps_client.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/slot_transfer.h"
#include "worker/cache/step_result.h"
#include "worker/device/host_buffer.h"

namespace herald::worker {

class RowFetcher {
 public:
  // Rows the plan initialises get the values the PS would create: a
  // function of `seed`, the table, the key and the table's init scale
  // (`init_scale`, one per table, or empty if no plan initialises rows).
  // Nothing is owned; everything must outlive the fetcher.
  // `tables` (may be null): threads to place the cache's bookkeeping of
  // every table at once.
  RowFetcher(Device* device, ps::PsClient* ps, EmbeddingCache* cache, SlotTransfer* transfer,
             uint64_t seed, std::vector<float> init_scale, ThreadPool* tables = nullptr);

  // Places every row `step` fetches or initialises (the early fetch
  // requested by Prefetch(step) if there was one, else fetched now).
  absl::Status Fetch(const plan::Step& step, StepResult* result);
  // Requests `next`'s early fetches now, in the background; a prefetch for
  // another step still in flight is dropped.
  void Prefetch(const plan::Step& next);
  // The caller has waited for the device: every fetch buffer may be refilled.
  void Settled();
  // Computes `step`'s initial rows (plan::Step::initial_rows) so that Fetch
  // only places them. Uses no state the fetcher changes: may run on any
  // thread, at the same time as Fetch of another step.
  void PrepareInitialRows(plan::Step* step) const;

 private:
  // A fetch from the PS in flight: the keys of a step's fetches with early
  // == `early`, per table, the slots they go to, and the fetch buffer their
  // rows land in (table blocks one after the other, from row_at[i]).
  struct StartedFetch {
    std::vector<ps::TableKeys> keys;
    std::vector<std::vector<uint32_t>> slots;  // parallel to keys
    std::vector<size_t> tables;
    std::vector<size_t> row_at;  // first float of each table's block
    size_t floats = 0, rows = 0;
    int buffer = -1;  // buffers_ index; -1: nothing to fetch
    PendingCall<absl::Status> done;
  };
  StartedFetch Start(const plan::Step& step, bool early, ps::FetchMode mode, ps::Launch launch);
  // Waits for `fetch` and writes its rows into their slots (one upload of
  // every table's rows and one of the slots); releases its buffer.
  absl::Status Place(StartedFetch& fetch, StepResult* result);
  // Gives up a started fetch that will not be placed (its call is destroyed
  // first: that waits for any writing into its buffer).
  void Drop(StartedFetch& fetch);
  // A buffer no fetch is filling and the device no longer reads (waiting
  // for the device if it must): the next in turn.
  int TakeBuffer();
  // The rows `step` initialises (computed here unless PrepareInitialRows
  // did), placed.
  void Initialize(const plan::Step& step, StepResult* result);
  // The initial values of table t's rows `step` initialises, in init order.
  std::vector<float> InitialRows(const plan::Step& step, size_t t) const;

  Device* device_;
  ps::PsClient* ps_;
  EmbeddingCache* cache_;
  SlotTransfer* transfer_;
  ThreadPool* tables_;
  uint64_t seed_;
  std::vector<float> init_scale_;

  struct Buffer {
    explicit Buffer(Device* device) : rows(device) {}
    HostBuffer<float> rows;
    std::vector<uint64_t> versions;
    bool filling = false;         // a started fetch writes into it
    bool device_reading = false;  // uploaded since the device was last waited for
  };
  std::vector<Buffer> buffers_;
  size_t next_buffer_ = 0;
  // The early fetch of the step after the current one, in flight (declared
  // after the buffers it writes into: destroyed first).
  struct Prefetched {
    uint64_t iteration = 0;
    StartedFetch fetch;
  };
  std::optional<Prefetched> prefetch_;
};

}  // namespace herald::worker
