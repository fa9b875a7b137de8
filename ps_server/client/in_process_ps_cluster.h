#pragma once
// The real parameter-server code in this process, without sockets, for
// tests and benchmarks of the worker and the scheduler (testonly: the
// client the binaries link, //ps_server/client, carries no server code).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ps_server/client/ps_client.h"
#include "ps_server/client/shard_stub.h"
#include "ps_server/client/sharded_ps_client.h"
#include "ps_server/service/ps_core.h"

namespace herald::ps {

// A stub calling `core` directly: control calls as protos, data calls into
// the job's shard on the caller's spans. Not owned: `core` must outlive it.
std::unique_ptr<ShardStub> MakeInProcessShardStub(PsCore* core, std::string name);

// `num_shards` PsCores in this process behind a ShardedPsClient.
class InProcessPsCluster {
 public:
  explicit InProcessPsCluster(uint32_t num_shards, PsCoreOptions core_options = {},
                              PsClientOptions client_options = {});
  PsClient& client() { return *client_; }
  // Another client of the same shards (e.g. with its own run id), as a
  // second process would have.
  std::unique_ptr<PsClient> NewClient(PsClientOptions options = {});
  PsCore& core(uint32_t shard) { return *cores_[shard]; }

 private:
  std::vector<std::unique_ptr<PsCore>> cores_;
  std::unique_ptr<PsClient> client_;
};

}  // namespace herald::ps
