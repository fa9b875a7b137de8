#pragma once
// Everything one worker holds for one job: its device, its replica of the
// dense model and optimizer, its embedding cache (per-table slot arrays),
// its rank in the dense all-reduce and the step executor over them. Used by
// herald_worker and by in-process multi-worker tests.

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "common/tunables.h"
#include "common/ucx/ucx_worker.h"
#include "proto/job.pb.h"
#include "ps_server/client/ps_client.h"
#include "worker/cache/embedding_cache.h"
#include "worker/cache/step_executor.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/kv_store.h"
#include "worker/collectives/row_exchanger.h"
#include "worker/device/device.h"
#include "worker/model/dense_optimizer.h"
#include "worker/model/rec_model.h"
#include "worker/runtime/device_factory.h"

namespace herald::worker {

struct ReplicaOptions {
  std::string device = "cpu";  // "cpu" or "cuda:N" (device_factory.h)
  DeviceOptions device_options;
  // The scheduler's choice (JoinJobResponse.dense_collective).
  proto::DenseCollective collective = proto::DENSE_COLLECTIVE_GLOO;
  CollectiveOptions collective_options;
  // Hand-offs' row exchange: a Gloo mesh of its own under this prefix, on
  // collective_options.gloo's interface and timeout.
  std::string exchange_prefix = "rows";
  // Overlap transfers with each other and with compute (StepExecutor).
  bool overlap = true;
  uint64_t all_reduce_bucket_bytes = tunables::kAllReduceBucketBytes;
  uint32_t prefetch_steps = tunables::kPrefetchSteps;
  int check_threads = 0;  // WorkerAgentOptions::check_threads
  // Hand-offs over UCX (UcxRowExchanger) instead of Gloo when every worker
  // of the job asks for it (they agree through the store); the token and
  // UCX options it connects with.
  bool ucx_exchange = false;
  std::string token;
  ucx::UcxWorker::Options ucx;
};

struct WorkerReplica {
  std::unique_ptr<Device> device;
  std::unique_ptr<RecModel> model;
  std::optional<DenseOptimizer> optimizer;
  std::unique_ptr<EmbeddingCache> cache;
  std::unique_ptr<DenseAllReducer> reducer;
  std::unique_ptr<RowExchanger> exchanger;  // jobs with hand-offs and > 1 worker
  std::unique_ptr<StepExecutor> executor;

  // `table_slots`: each table's slot array size. With workers > 1 the ranks
  // meet through `store` (Gloo or NCCL); blocks until all have connected.
  // `ps` and `store` must outlive the replica (store: only during the call).
  // Errors: the device's (creation, or memory for the model and cache:
  // ResourceExhausted), the spec's (model, optimizers), the collective's.
  absl::Status Init(const proto::JobSpec& spec, uint32_t rank, uint32_t workers,
                    const std::vector<uint32_t>& table_slots, ps::PsClient* ps, KvStore* store,
                    const ReplicaOptions& options);

  // Starts from a checkpoint's dense half (a resumed job): `values` are the
  // parameters, `state` the dense optimizer's state, float32 bytes.
  // Errors: InvalidArgument when a size is not the model's.
  absl::Status LoadDense(const std::string& values, const std::string& state);
};

}  // namespace herald::worker
