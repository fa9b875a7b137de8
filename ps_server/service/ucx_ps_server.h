#pragma once
// A herald_ps process's embedding data path over UCX: fetch, push-gradients
// and write-back requests in the binary row format (ps_server/wire/
// row_wire.h), served straight into the job's JobShard: requests are read in
// place, a fetch's rows are written by the shard into the reply buffer.
// Control calls (start, end, iteration done, checkpoint, stats) stay on
// gRPC (ps_service.h).
//
// A request that does not decode, or that names a job this process does not
// hold, is answered with INVALID_ARGUMENT or NOT_FOUND naming what; a
// decoded one the shard refuses counts in its rejected requests. The server
// keeps serving either way and nothing stored changes.

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/ucx/ucx_rpc.h"
#include "ps_server/service/ps_core.h"

namespace herald::ps {

// One data request against `core`. Errors: as above, and the shard's.
absl::StatusOr<ucx::AlignedBuffer> ServeRowMessage(PsCore& core, const ucx::AlignedBuffer& message);

class UcxPsServer {
 public:
  // `core` must outlive the server. Errors: Unavailable (UCX cannot start).
  static absl::StatusOr<std::unique_ptr<UcxPsServer>> Start(PsCore* core,
                                                            const ucx::RpcServerOptions& options);

  // What a client connects to (ucx::UcxRpcServer::address()).
  const std::string& address() const { return rpc_->address(); }
  // Requests that did not decode (each answered with its error).
  uint64_t malformed() const { return malformed_.load(); }
  uint64_t refused() const { return rpc_->refused(); }

 private:
  UcxPsServer() = default;
  std::atomic<uint64_t> malformed_{0};
  std::unique_ptr<ucx::UcxRpcServer> rpc_;
};

}  // namespace herald::ps
