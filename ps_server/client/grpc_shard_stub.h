#pragma once
// ShardStub over a gRPC channel to one herald_ps.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/rpc/channel.h"
#include "ps_server/client/shard_stub.h"

namespace herald::ps {

// Errors: InvalidArgument for unreadable TLS material.
absl::StatusOr<std::unique_ptr<ShardStub>> MakeGrpcShardStub(const std::string& address,
                                                             const rpc::ChannelOptions& options);

}  // namespace herald::ps
