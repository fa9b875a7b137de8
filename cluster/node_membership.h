#pragma once
// A node's membership in the cluster (used by herald_ps and herald_worker):
// registers with the scheduler, retrying until it answers, then heartbeats
// at the interval the scheduler asks for, registering again when the
// scheduler no longer knows the node (it restarted or declared the node
// dead). Runs on its own thread until destroyed.

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/rpc/channel.h"
#include "common/tunables.h"
#include "grpcpp/grpcpp.h"
#include "proto/scheduler.grpc.pb.h"

namespace herald::cluster {

struct MembershipOptions {
  std::string scheduler_address;
  std::string token;            // cluster token (empty: none)
  rpc::ChannelOptions channel;  // TLS settings for the scheduler channel
  proto::RegisterRequest registration;
  absl::Duration retry = absl::Milliseconds(tunables::kRegisterRetryMs);  // after a failure
};

class NodeMembership {
 public:
  // Errors: InvalidArgument for a bad scheduler address.
  static absl::StatusOr<std::unique_ptr<NodeMembership>> Start(MembershipOptions options);
  ~NodeMembership();

  // Waits up to `wait` for a registration. Errors: DeadlineExceeded with
  // the last registration error.
  absl::StatusOr<proto::RegisterResponse> WaitRegistered(absl::Duration wait);
  // The current node id ("" before the first registration).
  std::string node_id() const;
  // Registrations so far (more than one: the scheduler forgot the node).
  int registrations() const;
  // The address this node registers with.
  const std::string& address() const { return options_.registration.address(); }

  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

 private:
  NodeMembership(MembershipOptions options, std::shared_ptr<grpc::Channel> channel);
  void Run();
  bool TryRegister();
  bool Heartbeat();  // false: register again

  const MembershipOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Coordinator::Stub> stub_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  proto::RegisterResponse response_ ABSL_GUARDED_BY(mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(mu_) = absl::UnavailableError("not registered yet");
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace herald::cluster
