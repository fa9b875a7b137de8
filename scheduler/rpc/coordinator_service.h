#pragma once
// gRPC Coordinator: registration, heartbeats and the rendezvous store.
// Registration refuses a node whose wire version this build cannot speak
// (FAILED_PRECONDITION naming both builds' versions; logged once per
// address). Thread-safe.

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "proto/scheduler.grpc.pb.h"
#include "scheduler/membership/kv_rendezvous.h"
#include "scheduler/membership/node_registry.h"

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
  absl::Mutex refused_mu_;
  absl::flat_hash_set<std::string> refused_ ABSL_GUARDED_BY(refused_mu_);  // addresses logged
};

}  // namespace herald::scheduler
