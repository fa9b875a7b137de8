#pragma once
// Everything a worker or the scheduler needs from the parameter servers, for
// a whole cluster of shards: keys are routed to their shard by the job's
// KeyRouter, deduplicated, split into requests that fit a message, sent to
// the shards in parallel, and the answers put back in the caller's order.
//
// Implementations: MakeGrpcPsClient (real herald_ps processes) and
// InProcessPsCluster (in_process_ps_cluster.h: the same server code in this
// process, for tests).
// Thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"
#include "common/pending_call.h"
#include "proto/checkpoint.pb.h"
#include "proto/job.pb.h"
#include "proto/ps.pb.h"

namespace herald::ps {

struct TableKeys {
  TableId table;
  std::vector<Key> keys;
};

// Rows of one table in the order of `keys`: row i is
// rows[i * row_floats, (i + 1) * row_floats) (values then optimizer state).
struct TableRows {
  TableId table;
  std::vector<Key> keys;
  uint32_t row_floats = 0;
  std::vector<float> rows;
  std::vector<uint64_t> versions;
};

// Where a fetch's rows land (StartFetchInto), one entry per table of the
// call, in the order of its keys: row i (row_floats[t] floats) at
// rows[t] + i * row_floats[t], its version at versions[t][i]. The memory
// is the caller's (pinned host memory on a GPU worker, so the rows go to
// the device without another copy).
struct RowSink {
  std::vector<float*> rows;
  std::vector<uint64_t*> versions;
  std::vector<uint32_t> row_floats;  // > 0: the widths the caller expects
};

// InvalidArgument unless `sink` has one entry per table of `keys`, each
// with memory (where the table has keys) and a width.
absl::Status CheckSink(const std::vector<TableKeys>& keys, const RowSink& sink);

// Gradients of one table: `dim` floats per key.
struct TableGrads {
  TableId table;
  std::vector<Key> keys;
  uint32_t dim = 0;
  std::vector<float> grads;
};

// Rows read from the parameter servers' disk tiers: on a request's critical
// path, and ahead (the scheduler's look-ahead).
struct PsDiskReads {
  uint64_t critical = 0;
  uint64_t ahead = 0;
};

// Which rows a fetch of iteration t answers with.
struct FetchMode {
  enum Kind {
    kCommitted,  // as of the end of t - 1, once it committed (JobShard::Fetch)
    kEarly,      // the same rows, once t - early_distance - 1 committed,
                 //   before the later commits, where none changes in them
    kReadOnly,   // kCommitted without creating rows on the shards (evaluation)
  };
  FetchMode(Kind kind) : kind(kind), early_distance(kind == kEarly ? 1 : 0) {}  // NOLINT
  // kEarly at `distance` (1..kMaxEarlyDistance: plan::FetchRows::early).
  static FetchMode Early(uint32_t distance) {
    FetchMode mode(kEarly);
    mode.early_distance = distance;
    return mode;
  }
  Kind kind;
  uint32_t early_distance;  // 0 unless kEarly
};

// How a started data call runs.
enum class Launch {
  kBackground,  // starts now: the caller goes on and waits later (the client may build,
                //   send and place on threads of its own)
  kOnWait,      // may run inside Wait(): the caller waits at once (the blocking calls)
};

class PsClient {
 public:
  virtual ~PsClient() = default;

  virtual uint32_t num_shards() const = 0;

  // Installs the job on every shard (restoring every shard from
  // `restore_manifest` if set: a checkpoint of `restore_job_id`, or of
  // `job_id` when that is empty). Returns the job's next iteration.
  virtual absl::StatusOr<uint64_t> StartJob(const std::string& job_id, const proto::JobSpec& spec,
                                            uint32_t num_workers,
                                            const std::string& restore_manifest = "",
                                            const std::string& restore_job_id = "") = 0;
  virtual absl::Status EndJob(const std::string& job_id) = 0;

  // The data calls, each started (Start…: Wait() gives the outcome) and
  // blocking (the started call waited for at once, Launch::kOnWait).
  //
  // Fetch: rows as of the end of iteration - 1 (see JobShard::Fetch).
  // Duplicate keys are fetched once and returned at every position.
  // StartFetch copies what it needs.
  virtual PendingCall<absl::StatusOr<std::vector<TableRows>>> StartFetch(
      const std::string& job_id, Iteration iteration, const std::vector<TableKeys>& keys,
      FetchMode mode, Launch launch) = 0;
  absl::StatusOr<std::vector<TableRows>> Fetch(const std::string& job_id, Iteration iteration,
                                               const std::vector<TableKeys>& keys,
                                               FetchMode mode = FetchMode::kCommitted) {
    return StartFetch(job_id, iteration, keys, mode, Launch::kOnWait).Wait();
  }
  // StartFetchInto: the same rows written into `sink` as they arrive
  // (Wait() returns once all are there), with no copy owned by the call.
  // The keys are sent as given: a key listed twice is fetched twice. The
  // sink must stay valid and untouched until Wait returns, or until the
  // call is destroyed unwaited (which waits for any writing in progress).
  // Errors: those of StartFetch; InvalidArgument for a sink that does not
  // fit the keys (CheckSink); DataLoss for rows of another width.
  virtual PendingCall<absl::Status> StartFetchInto(const std::string& job_id, Iteration iteration,
                                                   const std::vector<TableKeys>& keys,
                                                   FetchMode mode, Launch launch,
                                                   const RowSink& sink) = 0;
  // PushGradients: duplicate keys of one table are summed in the order
  // given before sending. `grads` must stay valid until Wait returns.
  virtual PendingCall<absl::Status> StartPushGradients(const std::string& job_id,
                                                       Iteration iteration, WorkerRank worker,
                                                       const std::vector<TableGrads>& grads,
                                                       Launch launch) = 0;
  absl::Status PushGradients(const std::string& job_id, Iteration iteration, WorkerRank worker,
                             const std::vector<TableGrads>& grads) {
    return StartPushGradients(job_id, iteration, worker, grads, Launch::kOnWait).Wait();
  }
  // WriteBack: errors: InvalidArgument for a key given twice. `rows` must
  // stay valid until Wait returns.
  virtual PendingCall<absl::Status> StartWriteBack(const std::string& job_id, Iteration iteration,
                                                   WorkerRank worker,
                                                   const std::vector<TableRows>& rows,
                                                   Launch launch) = 0;
  absl::Status WriteBack(const std::string& job_id, Iteration iteration, WorkerRank worker,
                         const std::vector<TableRows>& rows) {
    return StartWriteBack(job_id, iteration, worker, rows, Launch::kOnWait).Wait();
  }
  // Reports to every shard. Returns true if every shard has now committed
  // the iteration. Adds to `disk_reads` (if given) the rows that the
  // iterations this report committed read from the shards' disk tiers.
  // `expire` (if given): rows the shards delete at the iteration's commit
  // (row expiry), each key sent to its shard.
  virtual absl::StatusOr<bool> IterationDone(const std::string& job_id, Iteration iteration,
                                             WorkerRank worker, uint32_t num_workers,
                                             PsDiskReads* disk_reads = nullptr,
                                             const std::vector<TableKeys>* expire = nullptr) = 0;
  // Checkpoints every shard at `iteration` into `dir` (each waits for the
  // iteration's commit). Returns each shard's file, by shard index, for the
  // manifest the caller assembles and writes last
  // (checkpoint::AssembleManifest, checkpoint::WriteManifest).
  virtual absl::StatusOr<std::vector<proto::CheckpointShard>> CheckpointShards(
      const std::string& job_id, uint64_t iteration, const std::string& dir) = 0;
  // One entry per shard.
  virtual absl::StatusOr<std::vector<proto::PsStatsResponse>> Stats(const std::string& job_id) = 0;
  // Tells the shards which rows `iteration` will touch (each shard its own
  // keys), for those with a disk tier to load them ahead. Returns once
  // every shard has queued them. Errors: a shard without a disk tier for
  // the job refuses (FailedPrecondition).
  virtual absl::Status LookAhead(const std::string& job_id, Iteration iteration,
                                 const std::vector<TableKeys>& keys) = 0;
  // Calls off the caller's work: data calls in flight fail with
  // Cancelled(why) where the transport allows (ShardStub::Cancel).
  virtual void Cancel(const std::string& why) {}
};

}  // namespace herald::ps
