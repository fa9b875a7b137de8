#pragma once
// Executes one worker step, phases in the order of the BSP protocol
// (docs/worker.md):
//   1 write back the dirty rows of evicted slots     (write-back)
//   2 fetch missing rows into their slots            (fetch)
//   3 forward + backward                             (compute)
//   4 all-reduce the dense gradients                 (all-reduce)
//   5 dense optimizer step                           (compute)
//   5b served rows (jobs that serve): send the gradients of remote rows to
//      their owners, receive the ones for rows this worker owns, and sum
//      every trainer's gradient in rank order, as the PS would (push)
//   6 owned rows: sparse optimizer in the cache      (compute)
//   7 shared rows: push gradients to the PS          (push)
//   8 write back the rows the plan names             (write-back)
//   9 report the iteration done to every PS shard    (push)
//  10 hand-offs and served copies: send the rows the plan names to the
//     workers training them next, receive the ones sent to this worker
//                                                   (hand-off)
// Rows received in step t's phase 10 are placed in step t+1's fetch phase
// (receive_slots) as this worker's dirty copies, or served copies.
//
// Overlap (ExecutorOptions::overlap): the evictions' write-back (1) runs
// while the fetch (2) does; the push (7) and the write-back (8) go to the
// PS at once, both before the iteration-done report (9) as the protocol
// requires; the hand-off exchange (10) runs on while the next step evicts
// and fetches (its rows were read from the cache first; the next step
// waits for them before placing them); and given the next step, its
// fetches the plan marks early are requested right after this step's
// fetch, so they travel while this step computes, and the next step only
// places them. The rows are the same (the
// shard serves an early fetch only when none of its rows changes in the
// iteration before; otherwise it waits for that commit), and no arithmetic
// moves: overlap changes no bit of the model. The phase times are then the
// time the worker waited for each phase, not the time its transfers took.
// The whole step is validated first (plan_check.h); a step that does not fit
// changes nothing. On a device that runs asynchronously (a GPU) one step's
// device work is queued whole: the only waits are the reads of rows leaving
// the cache (push, write-back, hand-off) and, last, the loss; before that
// read, the next step (where given) is checked against the cache and its
// lists packed for the device, so both overlap the device's work
// (plan::Step::checked_at, staged_as). The step's lists travel to the
// device in one copy (step_upload.h). A failure after validation (a PS or peer
// error) fails the step with the phase named; the cache is then unusable for this job.

#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/pending_call.h"
#include "plan/step.h"
#include "ps_server/client/ps_client.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/plan_check.h"
#include "worker/cache/step_upload.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/row_exchanger.h"
#include "worker/device/host_buffer.h"
#include "worker/model/dense_optimizer.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

struct PhaseTimes {
  double fetch_ms = 0;
  double compute_ms = 0;
  double allreduce_ms = 0;
  double push_ms = 0;
  double writeback_ms = 0;
};

struct StepResult {
  double loss_sum = 0;
  uint32_t num_samples = 0;
  PhaseTimes times;
  uint64_t rows_fetched = 0;
  uint64_t rows_pushed = 0;  // gradient rows sent to the PS
  uint64_t rows_written_back = 0;
  // Rows sent to another worker: hand-offs, served copies and gradients
  // sent to a row's owner.
  uint64_t rows_handed_off = 0;
  uint64_t rows_initialized = 0;  // never trained: initialised here, not fetched
  uint64_t rows_prefetched = 0;   // of rows_fetched: requested during the step before (overlap)
  // Rows the PS shards read from disk for the iterations this worker's
  // report committed (ps::PsClient::IterationDone).
  ps::PsDiskReads ps_disk_reads;
  uint64_t bytes_moved = 0;  // payload bytes of the three above
};

struct ExecutorOptions {
  uint32_t rank = 0;
  uint32_t num_workers = 1;
  // false: skip the PS entirely (warm-cache benchmarks; the plan must not
  // fetch, push or write back).
  bool use_ps = true;
  // Worker-to-worker hand-offs (every worker of the job calls it once per
  // step); null: a step with a hand-off fails, nothing changed.
  RowExchanger* exchanger = nullptr;
  // Rows served by their owner (job spec scheduling.serve): every step
  // exchanges the gradients of served rows (phase 5b) through `exchanger`,
  // which every worker of the job calls, whatever its plan lists.
  bool serve = false;
  // Rows the plan initialises (init) get the values the PS would create:
  // a function of the job's seed, the table and the key, with each table's
  // init_scale (JobSpec). A step with an init list needs one scale per table.
  uint64_t seed = 0;
  std::vector<float> init_scale;
  // Overlap transfers with each other and with compute (see above).
  bool overlap = true;
  // Threads checking each step's plan, tables in parallel (PlanChecker).
  int check_threads = 1;
};

// min(4, cores / 4), at least 1: a node's workers share its cores.
int DefaultCheckThreads();

class StepExecutor {
 public:
  // Nothing is owned; everything must outlive the executor.
  StepExecutor(Device* device, RecModel* model, DenseOptimizer* dense_optimizer,
               DenseAllReducer* all_reducer, ps::PsClient* ps, EmbeddingCache* cache,
               ExecutorOptions options);

  // `next`: the step after this one where already known; with overlap on,
  // its early fetches start during this step.
  absl::StatusOr<StepResult> Run(const plan::Step& step, const plan::Step* next = nullptr);

 private:
  // What becomes of the slots a write-back listed.
  enum class SlotsAfter {
    kFreed,  // evictions: the slots are free for other rows
    kClean,  // the plan's write-backs: the PS now holds the cached version
  };
  // The dirty rows of each table's `listed` slots (plan::TablePlan::evict
  // or ::writeback), read from the device; the slots are then as `after`.
  std::vector<ps::TableRows> CollectWriteBack(const plan::Step& step,
                                              plan::SlotRows plan::TablePlan::*listed,
                                              SlotsAfter after, StepResult* result);
  // The gradients of shared rows, read from the device and zeroed there
  // (with policy het, a slot that held gradients pushes them too).
  std::vector<ps::TableGrads> CollectPush(const plan::Step& step, StepResult* result);
  // Policy het: the held gradients of each table's `listed` slots that hold
  // some (plan::TablePlan::evict or ::flush), read and zeroed; flushed
  // slots are stale afterwards.
  std::vector<ps::TableGrads> CollectHeld(const plan::Step& step,
                                          plan::SlotRows plan::TablePlan::*listed,
                                          StepResult* result);
  // The held gradients of slots[t] of each table t, read in one transfer
  // and zeroed on the device.
  std::vector<std::vector<float>> TakeHeld(const std::vector<std::vector<uint32_t>>& slots);
  // Policy het: each hold slot's gradient added to what it holds, and the
  // slots' optimizer updates appended to `updates` (they are trained as
  // owned rows).
  void HoldGradients(const plan::Step& step, std::vector<Device::RowUpdateTable>* updates);
  // Moves `more` into `to`, one entry per table (keys of one table are
  // distinct across the plan's lists).
  static void AppendGrads(std::vector<ps::TableGrads> more, std::vector<ps::TableGrads>* to);
  absl::Status Fetch(const plan::Step& step, StepResult* result);
  // A fetch from the PS in flight: the keys of a step's fetches with early
  // == `early`, per table, the slots they go to, and the fetch buffer their
  // rows land in (table blocks one after the other, from row_at[i]).
  struct StartedFetch {
    std::vector<ps::TableKeys> keys;
    std::vector<std::vector<uint32_t>> slots;  // parallel to keys
    std::vector<size_t> tables;
    std::vector<size_t> row_at;  // first float of each table's block
    size_t floats = 0, rows = 0;
    int buffer = -1;  // fetch_buffers_ index; -1: nothing to fetch
    PendingCall<absl::Status> done;
  };
  StartedFetch StartFetchOf(const plan::Step& step, bool early, ps::FetchMode mode,
                            ps::Launch launch);
  // Waits for `fetch` and writes its rows into their slots (one upload of
  // every table's rows and one of the slots); releases its buffer.
  absl::Status PlaceFetched(StartedFetch& fetch, StepResult* result);
  // A fetch buffer no fetch is filling and the device no longer reads (it
  // waits for the device if it must): the next in turn of three, so the
  // early fetch of the next step, started while the device may still read
  // this step's two, never has to wait.
  int TakeFetchBuffer();
  // Gives up a started fetch that will not be placed (its call is destroyed
  // first: that waits for any writing into its buffer).
  void DropFetch(StartedFetch& fetch);
  // Starts fetching `next`'s early rows (overlap).
  void Prefetch(const plan::Step& next);
  absl::Status Train(const plan::Step& step, StepResult* result);
  absl::Status GatherServed(const plan::Step& step, StepResult* result);
  absl::Status ApplyOwned(const plan::Step& step, StepResult* result);
  // Before anything changes: the step's hand-off peers are other workers,
  // and it has an exchanger if it hands off or serves.
  absl::Status CheckHandOffs(const plan::Step& step) const;
  // The step receives exactly the rows handed to this worker after the
  // previous step (checked before anything changes, or, with that exchange
  // still running, once it is in).
  absl::Status CheckReceived(const plan::Step& step) const;
  absl::Status PlaceReceived(const plan::Step& step);
  // Sends this step's hand-offs and starts receiving the rows handed to
  // this worker (handoff_); without overlap, waits for them too.
  absl::Status ExchangeHandOffs(const plan::Step& step, StepResult* result);
  // Waits for handoff_ and files what arrived into received_.
  absl::Status ReceiveHandOffs();
  void UploadSlots(const std::vector<uint32_t>& slots);
  // Rows `slots` of a device array (`stride` floats apart), their first
  // `width` floats each, copied to the host in order; `slots` stay uploaded
  // (ZeroRows may follow on slots_).
  std::vector<float> ReadSlots(const float* array, int stride, const std::vector<uint32_t>& slots,
                               int width);
  // The inverse: `host` (`width` floats per slot) into rows `slots`.
  void WriteSlots(const std::vector<float>& host, const std::vector<uint32_t>& slots, int width,
                  int stride, float* array);
  // Rows of several tables' arrays at once: one upload of every slot list,
  // a gather per table into one device block, and one copy to the host
  // (one wait, not one per table). slots_ then holds the lists one after
  // the other (SlotsAt).
  struct SlotRows {
    const float* array;
    int stride;
    const std::vector<uint32_t>* slots;
    int width;
  };
  std::vector<std::vector<float>> ReadSlotsOfTables(const std::vector<SlotRows>& reads);

  Device* device_;
  RecModel* model_;
  DenseOptimizer* dense_optimizer_;
  DenseAllReducer* all_reducer_;
  ps::PsClient* ps_;
  EmbeddingCache* cache_;
  PlanChecker plan_checker_;  // every step is checked before any of it runs
  ExecutorOptions options_;

  // Device staging, reused between steps.
  DeviceArray<uint32_t> slots_;
  DeviceArray<float> staging_;
  DeviceArray<uint32_t> hold_slots_;  // policy het: every table's hold list
  // The step's labels, dense features, and per table its samples' offsets
  // and slots and its owned slots, sent in one copy (Train).
  StepUpload upload_;
  // Rows read back from the device (ReadSlotsOfTables), reused.
  HostBuffer<float> read_back_;
  // The last check ahead: its token (plan::Step::checked_at) and the
  // cache's change count it passed at.
  uint64_t check_token_ = 0;
  uint64_t checked_changes_ = 0;
  // Per table: rows other workers handed to this one after the last step
  // (values with optimizer state, and version), placed by the next step.
  struct ReceivedRow {
    std::vector<float> row;  // values with optimizer state; a served copy: values only
    uint64_t version = 0;
    bool served = false;
  };
  std::vector<absl::flat_hash_map<Key, ReceivedRow>> received_;
  // Where fetched rows land: the device's host memory (page-locked on a
  // GPU), so they go to the device without another copy. Three, taken in
  // turn (TakeFetchBuffer): at most two fetches fill buffers at once (the
  // current step's and the next one's early fetch).
  struct FetchBuffer {
    explicit FetchBuffer(Device* device) : rows(device) {}
    HostBuffer<float> rows;
    std::vector<uint64_t> versions;
    bool filling = false;         // a started fetch writes into it
    bool device_reading = false;  // uploaded since the device was last waited for
  };
  std::vector<FetchBuffer> fetch_buffers_;
  size_t next_fetch_buffer_ = 0;
  // The early fetch of the step after the current one, in flight (declared
  // after the buffers it writes into: destroyed first).
  struct Prefetched {
    uint64_t iteration = 0;
    StartedFetch fetch;
  };
  std::optional<Prefetched> prefetch_;
  // The previous step's hand-off exchange, still running (overlap): the
  // next step waits for it after its fetch and files the rows into
  // received_. Per table, the rows that arrive: the plan's incoming lists
  // and the row widths.
  struct Incoming {
    plan::PeerRows rows;
    uint32_t dim, row_floats;
  };
  struct HandOff {
    PendingCall<RowExchanger::Received> exchange;
    std::vector<Incoming> incoming;
  };
  std::optional<HandOff> handoff_;
};

}  // namespace herald::worker
