#pragma once
// One job's tables on one parameter-server shard and the exact BSP iteration
// protocol (docs/protocol.md, "Parameter server"):
//
//   Fetch(t)          rows as of the end of iteration t-1; waits (up to a
//                     deadline) until every worker reported t-1, then per
//                     stripe of its keys until t-1's commit has written that
//                     stripe: stripes already written are copied while the
//                     commit goes on. Creates the rows it does not hold,
//                     except a read-only fetch (evaluation).
//   PushGradients(t)  buffers one worker's gradients for iteration t.
//   WriteBack(t)      buffers absolute rows (values + state + version) that a
//                     worker owned; stored at t's commit, before gradients.
//   IterationDone(t)  when every worker reported t, commits it: write-backs,
//                     then per row the pushed gradients summed in worker-rank
//                     order, one optimizer step, version + 1.
//
// The tables change only at commits, so a fetch sees one committed state.
// Every request is validated as a whole before anything is buffered: a
// rejected request changes nothing. Requests arrive as spans
// (shard_requests.h); decoding a wire format is the caller's job.
// Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "checkpoint/shard_file.h"
#include "common/router.h"
#include "common/thread_pool.h"
#include "common/tunables.h"
#include "proto/ps.pb.h"
#include "ps_server/shard/disk_tier.h"
#include "ps_server/shard/iteration_buffer.h"
#include "ps_server/shard/iteration_clock.h"
#include "ps_server/shard/shard_table.h"
#include "ps_server/wire/shard_requests.h"

namespace herald::ps {

struct JobShardOptions {
  std::string job_id;
  uint32_t shard = 0;
  uint32_t num_shards = 1;
  uint32_t num_workers = 1;
  std::vector<TableOptions> tables;  // tables[i].id == i
  // Stripes per table: parallelism within one request.
  uint32_t stripes_per_table = tunables::kStripesPerTable;
  // First iteration to run (0, or a restored checkpoint's iteration + 1).
  uint64_t first_iteration = 0;
  // Pushes, write-backs and reports are accepted for iterations
  // [open, open + iterations_ahead): a worker may finish its part of the next
  // iteration before the shard commits the current one.
  uint32_t iterations_ahead = tunables::kIterationsAhead;
  // A disk tier (disk_tier.h) when disk.memory_budget > 0: the rows beyond
  // the budget live in a store at disk.path.
  DiskTierOptions disk;
  // Tests: called on a committing thread before it writes a stripe that
  // has changes (table, stripe), outside the stripe's mutex.
  std::function<void(uint32_t table, uint32_t stripe)> before_stripe_commit;
};

// How far a checkpoint has got: rows written of the shard's rows. Called
// every kCheckpointProgressRows rows, after each table and before the file
// is finished, on the writing thread (which waits for it).
using CheckpointProgress = std::function<void(uint64_t written, uint64_t total)>;
inline constexpr uint64_t kCheckpointProgressRows = 1024;

class JobShard {
 public:
  // Errors: InvalidArgument for an inconsistent configuration.
  static absl::StatusOr<std::unique_ptr<JobShard>> Create(JobShardOptions options,
                                                          ThreadPool* pool);

  // Stops the disk tier's loader before the tables go.
  ~JobShard();

  const JobShardOptions& options() const { return options_; }
  bool has_disk_tier() const { return tier_ != nullptr; }

  // Writes each block's rows and versions where `out(b, row_floats)` says.
  // Errors: InvalidArgument (unknown or repeated table, key of another
  // shard), FailedPrecondition (iteration already committed),
  // DeadlineExceeded (t-1 not committed by `deadline`), ResourceExhausted
  // (row cap). On error, what was written to `out` is meaningless.
  absl::Status Fetch(const FetchIn& request, absl::Time deadline,
                     absl::FunctionRef<RowsOut(size_t block, uint32_t row_floats)> out);
  // Errors as Fetch, plus InvalidArgument (dim or length does not match the
  // table, a gradient that is not finite), AlreadyExists (this worker already
  // pushed a key for this iteration) and FailedPrecondition (worker already
  // reported done).
  absl::Status PushGradients(const PushIn& request);
  // Errors as PushGradients; AlreadyExists if the key was already written
  // back for this iteration; FailedPrecondition for a version older than the
  // stored one (a stale owner).
  absl::Status WriteBack(const WriteBackIn& request);
  // Returns true if this report completed and committed the iteration
  // (false if another report's thread was still committing an earlier one:
  // that thread commits it next).
  // With a disk tier, adds to `committed_reads` the disk reads of every
  // iteration this report committed. `expire`: rows deleted at the
  // iteration's commit, after its write-backs and gradients, from memory
  // and the disk tier (row expiry; a key the shard does not hold is
  // ignored). Errors: InvalidArgument (worker rank, worker count, an expire
  // block's table or a key of another shard), FailedPrecondition (already
  // committed, too far ahead), AlreadyExists (reported twice). A rejected
  // report changes nothing.
  absl::StatusOr<bool> IterationDone(Iteration iteration, WorkerRank worker, uint32_t num_workers,
                                     DiskReads* committed_reads = nullptr,
                                     absl::Span<const KeysIn> expire = {});
  // Writes the committed state after `iteration` to
  // `<dir>/<job>/iter-<iteration>/shard-<i>-of-<n>.hsf` (temp file + rename).
  // Waits (up to `deadline`) for that iteration to commit. Errors:
  // FailedPrecondition if a later iteration already committed.
  absl::StatusOr<checkpoint::ShardFileInfo> Checkpoint(const std::string& dir, uint64_t iteration,
                                                       absl::Time deadline,
                                                       const CheckpointProgress& progress = {});
  // The job was ended on this process (PsCore::EndJob): requests waiting
  // here return at once and later ones are refused, both ABORTED naming
  // `why`. Holders of the shard (a request in flight) thus never wait on a
  // job that is gone.
  void End(const std::string& why);
  // Counts a request rejected before it reached the shard (e.g. one that
  // could not be decoded) and returns its error.
  absl::Status Reject(absl::Status status);
  // Loads one row before serving starts (checkpoint restore); then
  // FinishRestore once (it writes what a disk tier still holds back).
  absl::Status RestoreRow(TableId table, Key key, uint64_t version, const float* row);
  absl::Status FinishRestore();
  // The keys iteration `iteration` will touch, for the disk tier to load
  // ahead (returns at once). Errors: as Fetch's key checks;
  // FailedPrecondition if the job has no disk tier here.
  absl::Status LookAhead(Iteration iteration, const std::vector<LookAheadKeys>& keys);

  void Stats(proto::PsStatsResponse* response);
  // First iteration not yet committed.
  uint64_t next_iteration();
  // Floats per row (values + optimizer state) of `table`. Errors:
  // InvalidArgument for a table the job does not have.
  absl::StatusOr<uint32_t> RowFloats(uint32_t table) const;

 private:
  JobShard(JobShardOptions options, ThreadPool* pool, KeyRouter router,
           std::unique_ptr<DiskTier> tier);

  struct Block {
    uint32_t table;
    absl::Span<const Key> keys;
  };
  // Checks a block's table (known, not repeated) and that its keys belong
  // to this shard. `where` names the block, like "keys[2]".
  absl::Status CheckKeys(const Block& block, const std::string& where,
                         std::vector<bool>* seen_tables) const;
  StripePlan PlanByStripe(const std::vector<Block>& blocks) const;
  // One key of a buffered request, handed to the callbacks of BufferRequest.
  struct KeyAt {
    size_t block;
    uint32_t pos;  // index in blocks[block].keys
    Key key;
    uint32_t row;  // the key's row in its stripe (found or created)
  };
  // The skeleton of PushGradients and WriteBack: under mu_, checks that
  // iteration `t` is open for `worker`, then per stripe (in parallel) finds
  // or creates every key's row and calls `check(key, repeated_in_request,
  // pending, stripe)`; only if every key passed, calls `store(key, pending)`
  // for every key. A rejected request buffers nothing.
  absl::Status BufferRequest(
      uint64_t t, uint32_t worker, const char* what, const std::vector<Block>& blocks,
      absl::FunctionRef<absl::Status(const KeyAt&, bool, const PendingStripe&, ShardTable::Stripe&)>
          check,
      absl::FunctionRef<void(const KeyAt&, PendingStripe&)> store) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status CheckIterationOpen(uint64_t iteration, uint32_t worker, const char* what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  IterationBuffer& Buffer(uint64_t iteration) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // No iteration before t that the shard still buffers (not yet
  // committing) holds a change for any of the keys.
  bool UnchangedBefore(uint64_t t, const std::vector<Block>& blocks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A fetch for t at early distance d may be served now, as far as the
  // clock goes: t - d - 1 committed, and no commit that moves rows under
  // way.
  bool EarlyWindow(uint64_t t, uint64_t d) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return d > 0 && clock_.committed() + d >= t && !commit_holds_rows_;
  }
  void CommitReadyIterations(DiskReads* reads) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies iteration t's write-backs and aggregated gradients (the
  // optimizers at t's learning rates), then its expiries.
  // Errors: the disk tier's, deleting expired rows (the commit stands).
  absl::Status Apply(IterationBuffer& buffer, uint64_t t);
  std::string MissingWorkers(uint64_t iteration) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const JobShardOptions options_;
  ThreadPool* const pool_;
  const KeyRouter router_;
  std::unique_ptr<DiskTier> tier_;  // null: all rows in memory
  std::vector<std::unique_ptr<ShardTable>> tables_;

  // Lock order: mu_, then rows_mu_, then a stripe's mutex. rows_mu_ is held
  // shared while rows are read or created (absl::ReaderMutexLock, taken
  // under mu_), exclusively by a checkpoint and by a commit that moves or
  // deletes rows (disk tier, expiry), and shared by any other commit
  // (CommitWindow, iteration_clock.h), which writes each stripe under the
  // stripe's mutex and then advances its Stripe::committed.
  absl::Mutex mu_;
  absl::Mutex rows_mu_;
  // A commit holding rows_mu_ exclusively is under way: fetches wait for it
  // to finish instead of per stripe.
  bool commit_holds_rows_ ABSL_GUARDED_BY(mu_) = false;
  // A thread is committing (CommitReadyIterations): a report that completes
  // a later iteration leaves its commit to that thread.
  bool committing_ ABSL_GUARDED_BY(mu_) = false;
  IterationClock clock_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::unique_ptr<IterationBuffer>> pending_ ABSL_GUARDED_BY(mu_);
  // The last committed iteration's buffer, reset, for the next one to open.
  std::unique_ptr<IterationBuffer> spare_ ABSL_GUARDED_BY(mu_);
  uint64_t fetches_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status EndedError(const char* what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Counters {
    uint64_t rows_fetched = 0, gradients_pushed = 0, rows_written_back = 0;
    uint64_t fetch_requests = 0, push_requests = 0, write_back_requests = 0;
    uint64_t rows_read_only = 0, read_only_requests = 0;  // evaluation fetches
    uint64_t rejected_requests = 0, iterations_committed = 0;
    uint64_t rows_expired = 0;
    uint64_t early_requests = 0, early_served_ahead = 0;
    double commit_ms_total = 0, commit_ms_max = 0;
  };
  absl::Mutex stats_mu_;
  Counters counters_ ABSL_GUARDED_BY(stats_mu_);
  void Count(const std::function<void(Counters&)>& fn);
};

}  // namespace herald::ps
