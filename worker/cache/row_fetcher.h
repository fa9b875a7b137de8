#pragma once
// The executor's fetch phase: the rows a step's plan fetches from the PS
// and the rows it initialises, placed into their cache slots on the device,
// with the cache told which key each slot now holds.
//
// Fetched rows land in the device's host memory (page-locked on a GPU),
// straight from the PS client (ps::RowSink), and go to the device in one
// copy per fetch. A plan's fetches marked early at distance d may be
// requested d steps before (Prefetch: the rows of one step go in up to as
// many requests as steps it is prefetched ahead, each step's at the
// earliest its distance allows); the step's Fetch then only places them,
// and fetches the rest. Each fetch fills a buffer of its own; a buffer the
// device may still read is refilled only once the caller waited for the
// device (Settled, once per step), and another is made while every one is
// being filled or read: as many as one step's fetches and the later steps'
// early ones in flight. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "common/ids.h"
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

  // Places every row `step` fetches or initialises: those Prefetch
  // requested for it, then the rest, fetched now. Prefetches for earlier
  // steps are dropped.
  absl::Status Fetch(const plan::Step& step, StepResult* result);
  // During the step at iteration `current`: requests in the background,
  // for each step of `ahead` (later steps, in order), the rows of its plan
  // marked early at a distance of at least how many steps ahead of
  // `current` it is, not requested before. Prefetches for steps not in
  // `ahead` are dropped.
  void Prefetch(uint64_t current, absl::Span<const plan::Step* const> ahead);
  // The caller has waited for the device: every fetch buffer may be refilled.
  void Settled();
  // Computes `step`'s initial rows (plan::Step::initial_rows) so that Fetch
  // only places them. Uses no state the fetcher changes: may run on any
  // thread, at the same time as Fetch of another step.
  void PrepareInitialRows(plan::Step* step) const;

 private:
  // A fetch from the PS in flight: the keys of a step's fetches with an
  // early distance in [lowest, below), per table, the slots they go to,
  // and the fetch buffer their rows land in (table blocks one after the
  // other, from row_at[i]).
  struct StartedFetch {
    std::vector<ps::TableKeys> keys;
    std::vector<std::vector<uint32_t>> slots;  // parallel to keys
    std::vector<size_t> tables;
    std::vector<size_t> row_at;  // first float of each table's block
    size_t floats = 0, rows = 0;
    int buffer = -1;  // buffers_ index; -1: nothing to fetch
    PendingCall<absl::Status> done;
  };
  // Distances [0, 1) are fetched as committed (FetchMode::kCommitted);
  // any other range early, at its rows' least distance.
  StartedFetch Start(const plan::Step& step, uint8_t lowest, uint8_t below, ps::Launch launch);
  // Waits for `fetch` and writes its rows into their slots (one upload of
  // every table's rows and one of the slots); releases its buffer.
  absl::Status Place(StartedFetch& fetch, StepResult* result);
  // Gives up a started fetch that will not be placed (its call is destroyed
  // first: that waits for any writing into its buffer).
  void Drop(StartedFetch& fetch);
  // A buffer no fetch is filling and the device no longer reads (a new
  // one if there is none: never a wait for the device).
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
  std::deque<Buffer> buffers_;  // a deque: a new one leaves the others where they are
  // The fetches requested for a later step, in flight (declared after the
  // buffers they write into: destroyed first). `requested_below`: its rows
  // marked early at this distance or more were requested.
  struct Prefetched {
    uint64_t iteration = 0;
    uint8_t requested_below = kMaxEarlyDistance + 1;
    std::vector<StartedFetch> fetches;
  };
  std::vector<Prefetched> prefetched_;
};

}  // namespace herald::worker
