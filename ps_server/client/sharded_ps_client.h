#pragma once
// The PsClient implementation: routes, deduplicates, splits and reassembles
// over one ShardStub per shard (shard i = stubs[i]).

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/cached_thread_pool.h"
#include "common/router.h"
#include "common/rpc/channel.h"
#include "common/tunables.h"
#include "ps_server/client/ps_client.h"
#include "ps_server/client/shard_stub.h"

namespace herald::ps {

class ShardedFetch;  // sharded_ps_client.cc

struct PsClientOptions {
  // Deadline of data calls (a fetch may wait for the previous commit).
  absl::Duration data_timeout = absl::Milliseconds(tunables::kDataDeadlineMs);
  // Deadline of control calls (start, end, stats, iteration done).
  absl::Duration control_timeout = absl::Milliseconds(tunables::kControlDeadlineMs);
  // A request (or a fetch's answer) larger than this is split.
  size_t max_request_bytes = tunables::kMaxRequestBytes;
  rpc::ChannelOptions channel;
  // The shards' UCX data addresses (UcxPsServer::address(), one per shard,
  // in shard order): fetch, push and write-back go over UCX, control calls
  // over gRPC. Empty: everything over gRPC.
  std::vector<std::string> ucx_addresses;
  std::string token;  // the cluster token the UCX servers ask for
  // Shared memory with shards on this host that offer it (UcxWorker::Options;
  // a dead shard is noticed by watching its process).
  bool ucx_shared_memory = true;
  // The run of the job this client serves (JoinJobResponse.run_id), stamped
  // on StartJob and on every data request; 0: unchecked (tools, tests).
  uint64_t run_id = 0;
};

class ShardedPsClient final : public PsClient {
 public:
  ShardedPsClient(std::vector<std::unique_ptr<ShardStub>> stubs, PsClientOptions options);

  uint32_t num_shards() const override { return static_cast<uint32_t>(stubs_.size()); }
  void Cancel(const std::string& why) override {
    for (auto& stub : stubs_) stub->Cancel(why);
  }
  absl::StatusOr<uint64_t> StartJob(const std::string& job_id, const proto::JobSpec& spec,
                                    uint32_t num_workers, const std::string& restore_manifest,
                                    const std::string& restore_job_id) override;
  absl::Status EndJob(const std::string& job_id) override;
  // Over stubs that start calls (UCX): every shard's requests sent at once,
  // no thread. Otherwise the shards' requests in parallel (ForEachShard),
  // on a thread of the call's own for Launch::kBackground.
  PendingCall<absl::StatusOr<std::vector<TableRows>>> StartFetch(const std::string& job_id,
                                                                 Iteration iteration,
                                                                 const std::vector<TableKeys>& keys,
                                                                 FetchMode mode,
                                                                 Launch launch) override;
  PendingCall<absl::Status> StartFetchInto(const std::string& job_id, Iteration iteration,
                                           const std::vector<TableKeys>& keys, FetchMode mode,
                                           Launch launch, const RowSink& sink) override;
  PendingCall<absl::Status> StartPushGradients(const std::string& job_id, Iteration iteration,
                                               WorkerRank worker,
                                               const std::vector<TableGrads>& grads,
                                               Launch launch) override;
  PendingCall<absl::Status> StartWriteBack(const std::string& job_id, Iteration iteration,
                                           WorkerRank worker, const std::vector<TableRows>& rows,
                                           Launch launch) override;
  absl::StatusOr<bool> IterationDone(const std::string& job_id, Iteration iteration,
                                     WorkerRank worker, uint32_t num_workers,
                                     PsDiskReads* disk_reads = nullptr,
                                     const std::vector<TableKeys>* expire = nullptr) override;
  absl::StatusOr<std::vector<proto::CheckpointShard>> CheckpointShards(
      const std::string& job_id, uint64_t iteration, const std::string& dir) override;
  absl::StatusOr<std::vector<proto::PsStatsResponse>> Stats(const std::string& job_id) override;
  absl::Status LookAhead(const std::string& job_id, Iteration iteration,
                         const std::vector<TableKeys>& keys) override;

 private:
  // The data calls over stubs that do not start calls: each shard's
  // requests one after the other, the shards in parallel.
  absl::Status FetchByShard(const std::string& job_id, uint64_t iteration, FetchMode mode,
                            ShardedFetch* fetch);
  // A fetch's shard calls: over stubs that start calls, every request sent
  // now and placed inside Wait(); otherwise FetchByShard as `launch` asks.
  PendingCall<absl::Status> RunFetch(const std::string& job_id, uint64_t iteration, FetchMode mode,
                                     Launch launch, std::shared_ptr<ShardedFetch> fetch);
  absl::Status PushByShard(const std::string& job_id, uint64_t iteration, uint32_t worker,
                           const std::vector<TableGrads>& grads);
  absl::Status WriteBackByShard(const std::string& job_id, uint64_t iteration, uint32_t worker,
                                const std::vector<TableRows>& rows);
  // Runs fn(shard) for every shard in parallel (shard 0 on the caller's
  // thread, the others on helpers_); the first failing shard's error,
  // annotated with the shard, or OK. Calls block (a fetch waits for the
  // previous commit) and concurrent callers (worker threads) must never
  // queue behind each other's blocked calls: with a bounded pool the
  // IterationDone that would unblock a waiting fetch could itself wait for a
  // pool thread. Hence a pool that never queues.
  absl::Status ForEachShard(const std::function<absl::Status(uint32_t)>& fn);
  // `work` run on a helper thread now (Launch::kBackground over stubs that
  // start calls: building, sending and placing off the caller's thread);
  // the pending call waits for its outcome. Destroying it unwaited waits
  // for `work` to end, since `work` may use the caller's memory.
  PendingCall<absl::Status> OnHelper(std::function<absl::Status()> work);
  // A call's requests started by `start` as `launch` asks: at once on the
  // caller's thread (kOnWait), or built, sent and waited for on a helper
  // (kBackground, OnHelper).
  PendingCall<absl::Status> Launched(Launch launch,
                                     const std::function<PendingCall<absl::Status>()>& start);
  // Whether every shard's stub starts data calls without waiting (UCX).
  bool StubsStartCalls() const;
  // `status` of shard s, naming it.
  absl::Status ShardError(uint32_t s, const absl::Status& status) const;
  // One call waiting for every (shard, call) started: the first error, naming its shard.
  PendingCall<absl::Status> WaitForAll(
      std::vector<std::pair<uint32_t, PendingCall<absl::Status>>> started);
  // The data calls' job and run (this client's).
  DataCallOf Of(const std::string& job_id) const { return {job_id, options_.run_id}; }

  std::vector<std::unique_ptr<ShardStub>> stubs_;
  PsClientOptions options_;
  CachedThreadPool helpers_{"ps-client"};
  KeyRouter router_;
};

// A client of real herald_ps processes; addresses[i] is shard i (gRPC), and
// options.ucx_addresses[i] its UCX data address if set. Errors:
// InvalidArgument (no address, a UCX address count that is not the shard
// count), UCX's (Unavailable, Unauthenticated naming the shard).
absl::StatusOr<std::unique_ptr<PsClient>> MakeGrpcPsClient(
    const std::vector<std::string>& addresses, const PsClientOptions& options = {});

}  // namespace herald::ps
