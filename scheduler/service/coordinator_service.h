#pragma once
// gRPC Coordinator: registration, heartbeats and the rendezvous store.

#include <string>

#include "proto/scheduler.grpc.pb.h"
#include "scheduler/service/kv_rendezvous.h"
#include "scheduler/service/node_registry.h"

namespace herald::scheduler {

class CoordinatorService final : public proto::Coordinator::Service {
 public:
  // Not owned. `token`: the cluster token every call must carry (empty: none).
  CoordinatorService(NodeRegistry* registry, KvRendezvous* rendezvous, std::string token,
                     uint32_t heartbeat_interval_ms);

  grpc::Status Register(grpc::ServerContext* context, const proto::RegisterRequest* request,
                        proto::RegisterResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const proto::HeartbeatRequest* request,
                         proto::HeartbeatResponse* response) override;
  grpc::Status KvSet(grpc::ServerContext* context, const proto::KvSetRequest* request,
                     proto::KvSetResponse* response) override;
  grpc::Status KvGet(grpc::ServerContext* context, const proto::KvGetRequest* request,
                     proto::KvGetResponse* response) override;

 private:
  NodeRegistry* registry_;
  KvRendezvous* rendezvous_;
  const std::string token_;
  const uint32_t heartbeat_interval_ms_;
};

}  // namespace herald::scheduler
