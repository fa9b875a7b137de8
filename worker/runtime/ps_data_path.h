#pragma once
// The embedding data path of one job: UCX or gRPC to its PS shards, chosen
// from the job's data_path, this worker's --transport, TLS and what the
// shards serve (docs/worker.md, `--transport`).

#include <memory>

#include "absl/status/statusor.h"
#include "proto/scheduler.pb.h"
#include "ps_server/client/ps_client.h"
#include "worker/runtime/worker_options.h"

namespace herald::worker {

struct JobPsClient {
  std::unique_ptr<ps::PsClient> client;
  bool over_ucx = false;  // hand-offs then travel over UCX too
};

// The job's PS client. "auto" takes UCX where every shard serves it, TLS is
// off and it connects, else gRPC (logged, with why). Errors:
// FailedPrecondition (UCX asked for where it cannot be had: TLS, a shard
// without it), the connection's.
absl::StatusOr<JobPsClient> ConnectJobPs(const proto::JoinJobResponse& join,
                                         const WorkerAgentOptions& options);

}  // namespace herald::worker
