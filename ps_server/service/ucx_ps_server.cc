#include "ps_server/service/ucx_ps_server.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/logging.h"
#include "common/status.h"
#include "ps_server/wire/row_wire.h"

namespace herald::ps {

absl::StatusOr<ucx::AlignedBuffer> ServeRowMessage(PsCore& core,
                                                   const ucx::AlignedBuffer& message) {
  HERALD_ASSIGN_OR_RETURN(wire::Request request, wire::DecodeRequest(message));
  HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobShard> shard,
                          core.Shard(std::string(request.job_id), request.run_id));
  switch (request.kind) {
    case wire::Kind::kFetch: {
      if (request.fetch.read_only && request.fetch.early) {
        return shard->Reject(
            absl::InvalidArgumentError("fetch: a read-only fetch (evaluation) cannot be early"));
      }
      // The reply is laid out once every block's row width is known; the
      // shard then writes the rows straight into it.
      std::vector<uint32_t> tables, row_floats;
      std::vector<uint64_t> counts;
      for (const KeysIn& b : request.fetch.blocks) {
        absl::StatusOr<uint32_t> rf = shard->RowFloats(b.table);
        if (!rf.ok()) return shard->Reject(rf.status());
        tables.push_back(b.table);
        row_floats.push_back(*rf);
        counts.push_back(b.keys.size());
      }
      wire::FetchReplyBuilder reply(tables, counts, row_floats);
      HERALD_RETURN_IF_ERROR(shard->Fetch(request.fetch, core.Bound(absl::InfiniteFuture()),
                                          [&](size_t b, uint32_t) { return reply.Out(b); }));
      return reply.Finish();
    }
    case wire::Kind::kPush:
      HERALD_RETURN_IF_ERROR(shard->PushGradients(request.push));
      return ucx::AlignedBuffer();
    case wire::Kind::kWriteBack:
      HERALD_RETURN_IF_ERROR(shard->WriteBack(request.write_back));
      return ucx::AlignedBuffer();
    default:
      return absl::InvalidArgumentError("row message: not a request");
  }
}

absl::StatusOr<std::unique_ptr<UcxPsServer>> UcxPsServer::Start(
    PsCore* core, const ucx::RpcServerOptions& options) {
  std::unique_ptr<UcxPsServer> server(new UcxPsServer());
  UcxPsServer* self = server.get();
  HERALD_ASSIGN_OR_RETURN(
      server->rpc_, ucx::UcxRpcServer::Start(options, [core, self](ucx::AlignedBuffer message) {
        absl::StatusOr<ucx::AlignedBuffer> reply = ServeRowMessage(*core, message);
        if (!reply.ok() && absl::StartsWith(reply.status().message(), "row message:")) {
          ++self->malformed_;
          HLOG_WARN("UCX: refused a request: {}", std::string(reply.status().message()));
        }
        return reply;
      }));
  return server;
}

}  // namespace herald::ps
