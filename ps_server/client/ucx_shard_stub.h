#pragma once
// A shard whose data calls (fetch, push gradients, write back) go over UCX
// in the binary row format (ps_server/wire/row_wire.h) and whose control
// calls go through another stub (gRPC). The fetched rows are read where
// they arrived (FetchRows): no protobuf on either side of the data path.

#include <memory>

#include "common/ucx/ucx_rpc.h"
#include "ps_server/client/shard_stub.h"

namespace herald::ps {

// `rpc` connects to every shard's UCX server; this shard is server `index`.
std::unique_ptr<ShardStub> MakeUcxShardStub(std::unique_ptr<ShardStub> control,
                                            std::shared_ptr<ucx::UcxRpcClient> rpc, size_t index);

}  // namespace herald::ps
