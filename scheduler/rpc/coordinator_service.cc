#include "scheduler/rpc/coordinator_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/tunables.h"
#include "common/version.h"

namespace herald::scheduler {

CoordinatorService::CoordinatorService(NodeRegistry* registry, KvRendezvous* rendezvous,
                                       std::string token, uint32_t heartbeat_interval_ms)
    : registry_(registry),
      rendezvous_(rendezvous),
      token_(std::move(token)),
      heartbeat_interval_ms_(heartbeat_interval_ms) {}

grpc::Status CoordinatorService::Register(grpc::ServerContext* context,
                                          const proto::RegisterRequest* request,
                                          proto::RegisterResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "Register"); !s.ok()) return s;
  if (!SpeaksWireVersion(request->wire_version())) {
    const std::string refused = absl::StrCat(
        request->role() == proto::NODE_ROLE_PS ? "herald_ps" : "herald_worker", " at ",
        request->address(), " is herald ",
        request->version().empty() ? "older than 0.29.0" : request->version(),
        " speaking wire version ", request->wire_version(), "; this scheduler is herald ",
        Version(), " (commit ", Commit(), ") speaking wire version ", kWireVersion,
        ": run one release on every node of the cluster");
    {
      absl::MutexLock lock(&refused_mu_);
      if (refused_.insert(request->address()).second) HLOG_ERROR("refused {}", refused);
    }
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, refused);
  }
  absl::StatusOr<NodeInfo> node = registry_->Register(*request);
  if (!node.ok()) return rpc::ToGrpcStatus(node.status());
  HLOG_INFO("registered {} at {} (rank {})", node->node_id, request->address(), node->rank);
  response->set_node_id(node->node_id);
  response->set_rank(node->rank);
  response->set_heartbeat_interval_ms(heartbeat_interval_ms_);
  response->set_wire_version(kWireVersion);
  response->set_version(absl::StrCat(Version(), " (commit ", Commit(), ")"));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Heartbeat(grpc::ServerContext* context,
                                           const proto::HeartbeatRequest* request,
                                           proto::HeartbeatResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "Heartbeat"); !s.ok()) return s;
  response->set_known(registry_->Heartbeat(request->node_id(), request->address()));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::KvSet(grpc::ServerContext* context,
                                       const proto::KvSetRequest* request, proto::KvSetResponse*) {
  if (auto s = rpc::CheckToken(context, token_, "KvSet"); !s.ok()) return s;
  return rpc::ToGrpcStatus(rendezvous_->Set(request->scope(), request->key(), request->value()));
}

grpc::Status CoordinatorService::KvGet(grpc::ServerContext* context,
                                       const proto::KvGetRequest* request,
                                       proto::KvGetResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "KvGet"); !s.ok()) return s;
  std::vector<std::string> keys(request->keys().begin(), request->keys().end());
  // Wait in slices so a shutting-down server (which cancels calls) is not held.
  const absl::Time deadline =
      absl::Now() +
      absl::Milliseconds(std::min<int64_t>(request->wait_ms(), tunables::kMaxRendezvousWaitMs));
  absl::StatusOr<std::vector<std::string>> values;
  for (;;) {
    const absl::Duration left = std::max(absl::ZeroDuration(), deadline - absl::Now());
    values = rendezvous_->Get(request->scope(), keys, std::min(left, absl::Milliseconds(200)));
    if (values.ok() || !absl::IsDeadlineExceeded(values.status()) || left <= absl::ZeroDuration() ||
        context->IsCancelled()) {
      break;
    }
  }
  if (!values.ok()) {
    return rpc::ToGrpcStatus(absl::Status(
        values.status().code(),
        absl::StrCat(values.status().message(), " after waiting ", request->wait_ms(), " ms")));
  }
  for (auto& v : *values) response->add_values(std::move(v));
  return grpc::Status::OK;
}

}  // namespace herald::scheduler
