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
//   9 report the iteration done to every PS shard    (commit; handed off,
//     not waited for, with StartCommitsWith)
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
// places them. The all-reduce (4) is started after the backward and, with a
// reducer that runs it on its own thread (Gloo), travels during 5b-10 (its
// buckets of the last layers' gradients already during the backward); it
// is waited for, and the dense optimizer step (5) queued, before the step
// ends, so the next step and a checkpoint read the same dense parameters.
// The rows are the same (the
// shard serves an early fetch only when none of its rows changes in the
// iteration before; otherwise it waits for that commit), and no arithmetic
// moves: overlap changes no bit of the model. The phase times are then the
// time the worker waited for each phase, not the time its transfers took.
// The whole step is validated first (step_validator.h); a step that does not fit
// changes nothing. On a device that runs asynchronously (a GPU) one step's
// device work is queued whole: the only waits are the reads of rows leaving
// the cache (push, write-back, hand-off) and, last, the loss. The shared
// rows' gradients are copied out on the device's copy stream as soon as
// backward is queued, so the push waits only for backward, not for the
// dense reduction and the row updates queued after it; with overlap the
// push leaves while the write-back's rows are read. Before the loss's
// read, the next step (where given) is checked against the cache and its
// lists packed for the device, so both overlap the device's work
// (plan::Step::checked_at, staged_as). The step's lists travel to the
// device in one copy (step_upload.h). A failure after validation (a PS or peer
// error) fails the step with the phase named; the cache is then unusable for this job.
//
// The parts, each a concern of its own: the fetch phase (row_fetcher.h),
// hand-offs (hand_offs.h), served rows' gradients (served_gradients.h),
// policy het's held gradients (held_gradients.h), and the device mover they
// all read and write cache slots through (slot_transfer.h). The executor
// keeps the order, the checks, and the bookkeeping of push and write-back.

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/thread_pool.h"
#include "common/tunables.h"
#include "plan/step.h"
#include "ps_server/client/ps_client.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/hand_offs.h"
#include "worker/cache/held_gradients.h"
#include "worker/cache/row_fetcher.h"
#include "worker/cache/served_gradients.h"
#include "worker/cache/slot_transfer.h"
#include "worker/cache/step_result.h"
#include "worker/cache/step_upload.h"
#include "worker/cache/step_validator.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/row_exchanger.h"
#include "worker/device/device_timer.h"
#include "worker/model/dense_optimizer.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

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
  // With overlap and a reducer that reduces in the background (Gloo): the
  // dense gradients the backward has finished are reduced while it goes
  // on, in buckets of at least this many bytes (DenseAllReducer).
  uint64_t all_reduce_bucket_bytes = tunables::kAllReduceBucketBytes;
  // With overlap: how many steps ahead a row marked early may be fetched
  // (1..kMaxEarlyDistance; the plan's distance bounds it too).
  uint32_t prefetch_steps = tunables::kPrefetchSteps;
  // Threads checking each step's plan, tables in parallel (StepValidator),
  // and doing the cache's per-table bookkeeping of evictions and loads.
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

  // `ahead`: the steps after this one already known, in order (ahead[0]
  // the next one); with overlap on, the early fetches of the first
  // options.prefetch_steps of them that their distances let go start during
  // this step, and the next one is checked and packed.
  absl::StatusOr<StepResult> Run(const plan::Step& step, absl::Span<const plan::Step* const> ahead);
  // `next`: the step after this one where already known (or null).
  absl::StatusOr<StepResult> Run(const plan::Step& step, const plan::Step* next = nullptr) {
    return next == nullptr ? Run(step, absl::Span<const plan::Step* const>())
                           : Run(step, absl::MakeConstSpan(&next, 1));
  }

  // Work on `step` that reads no state a step changes, done ahead on any
  // thread, also while another step runs (the worker's step stream does it
  // as steps arrive): the initial values of the rows it initialises
  // (plan::Step::initial_rows).
  void PrepareAhead(plan::Step* step) const { fetcher_.PrepareInitialRows(step); }

  // Phase 9 handed off: from now on, where a step would call
  // ps::PsClient::IterationDone and wait, it calls start(step) and goes on
  // (StepResult::commit_ms stays 0). `start` must send the report, in step
  // order, without the step waiting for it (the worker's StepReporter does,
  // on a thread of its own); an error it returns fails the step. Nothing
  // later in a step depends on the commit: the shards accept the next
  // iteration's requests before this one commits, and a fetch waits there
  // for the commit it needs.
  void StartCommitsWith(std::function<absl::Status(const plan::Step&)> start) {
    start_commit_ = std::move(start);
  }
  // The rows `step` has the PS delete at its commit (TablePlan::expire), per
  // table that has any: what its iteration-done report carries.
  static std::vector<ps::TableKeys> ExpiredRows(const plan::Step& step);

 private:
  // What becomes of the slots a write-back listed.
  enum class SlotsAfter {
    kFreed,  // evictions: the slots are free for other rows
    kClean,  // the plan's write-backs: the PS now holds the cached version
  };
  // Run's phases, in order; each fails naming itself (Phase).
  // Everything checked before any of the step changes anything.
  absl::Status Check(const plan::Step& step);
  // 1 and 2: the evicted slots' dirty rows (and, policy het, their held
  // gradients, into `held_grads` for 7) written back, the missing rows
  // fetched; with overlap at once.
  absl::Status EvictAndFetch(const plan::Step& step, std::vector<ps::TableGrads>* held_grads,
                             StepResult* result);
  // The rows the previous step's 10 sent this worker, checked and placed.
  absl::Status PlaceHandedOff(const plan::Step& step, StepResult* result);
  // 7 and 8: the shared rows' gradients (with `held_grads` and the flushed
  // ones) pushed, the plan's write-backs sent; with overlap at once.
  struct StartedPush;
  absl::Status PushAndWriteBack(const plan::Step& step, StartedPush& started,
                                std::vector<ps::TableGrads> held_grads, StepResult* result);
  // 9: the iteration reported done (or handed to StartCommitsWith's start).
  absl::Status Commit(const plan::Step& step, StepResult* result);
  // The next step checked against the cache as this one leaves it and its
  // lists packed, while the device may still train.
  void StageNext(const plan::Step* next, StepResult* result);
  // The loss and device time read (the step's one wait for the device).
  absl::Status Settle(const plan::Step& step, StepResult* result);
  // `s`, or the device's error, annotated with the iteration and `phase`.
  absl::Status Phase(const plan::Step& step, const char* phase, absl::Status s) const;
  // The rows written back to the PS (nothing sent for none), waited for or
  // started in the background (`rows` must outlive the call).
  absl::Status WriteBack(const plan::Step& step, const std::vector<ps::TableRows>& rows);
  PendingCall<absl::Status> StartWriteBack(const plan::Step& step,
                                           const std::vector<ps::TableRows>& rows);
  // The dirty rows of each table's `listed` slots (plan::TablePlan::evict
  // or ::writeback), read from the device; the slots are then as `after`.
  std::vector<ps::TableRows> CollectWriteBack(const plan::Step& step,
                                              plan::SlotRows plan::TablePlan::*listed,
                                              SlotsAfter after, StepResult* result);
  // The gradients of shared rows, read from the device and zeroed there,
  // in two halves: started as soon as backward is queued, so the copy runs
  // while the device reduces and updates, and finished when phase 7 needs
  // them (with policy het, a slot that held gradients pushes them too).
  struct StartedPush {
    std::vector<size_t> tables;  // with shared rows, in order
    SlotTransfer::StartedRead read;
  };
  StartedPush StartPush(const plan::Step& step, StepResult* result);
  std::vector<ps::TableGrads> FinishPush(const plan::Step& step, StartedPush& started,
                                         StepResult* result);
  // Moves `more` into `to`, one entry per table (keys of one table are
  // distinct across the plan's lists).
  static void AppendGrads(std::vector<ps::TableGrads> more, std::vector<ps::TableGrads>* to);
  // Forward and backward queued on the device (the loss stays there).
  void QueueTraining(const plan::Step& step, StepResult* result);
  // The dense gradients' all-reduce started (DenseAllReducer::
  // StartAllReduceSum: with Gloo it runs on its own thread while the step
  // goes on), then waited for and the dense optimizer step queued.
  // StartDenseBucket: grads [begin, size) are final; starts those not yet
  // started once they fill a bucket, or all of them with `rest`.
  // StartReduceDense starts the rest.
  void StartDenseBucket(size_t begin, bool rest);
  void StartReduceDense(StepResult* result);
  absl::Status FinishReduceDense(const plan::Step& step, StepResult* result);
  absl::Status ApplyOwned(const plan::Step& step, StepResult* result);

  Device* device_;
  RecModel* model_;
  DenseOptimizer* dense_optimizer_;
  DenseAllReducer* all_reducer_;
  size_t dense_unstarted_ = 0;  // this step's grads [0, this) not yet started
  ps::PsClient* ps_;
  EmbeddingCache* cache_;
  StepValidator step_validator_;  // every step is checked before any of it runs
  ExecutorOptions options_;
  // Threads (with the caller's) for the cache's per-table bookkeeping of
  // evictions and loads (table_parallel.h); null: the caller's alone.
  std::unique_ptr<ThreadPool> table_pool_;
  std::function<absl::Status(const plan::Step&)> start_commit_;  // null: commit inline

  // The device mover every part below reads and writes slots through.
  SlotTransfer transfer_;
  // The step's labels, dense features, and per table its samples' offsets
  // and slots and its owned slots, sent in one copy (Train).
  StepUpload upload_;
  RowFetcher fetcher_;      // phase 2
  ServedGradients served_;  // phase 5b
  HeldGradients held_;      // policy het
  HandOffs hand_offs_;      // phase 10, placed in the next step's phase 2
  // The device time of the step's training (StepResult::device_ms): forward
  // and backward, the dense optimizer step, the cache rows' updates.
  enum DeviceSpan { kForwardBackward, kDenseStep, kRowUpdates, kDeviceSpans };
  DeviceTimer device_time_;
  // The last check ahead: its token (plan::Step::checked_at) and the
  // cache's change count it passed at.
  uint64_t check_token_ = 0;
  uint64_t checked_changes_ = 0;
};

}  // namespace herald::worker
