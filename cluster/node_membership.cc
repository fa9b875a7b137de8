#include "cluster/node_membership.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/rpc/channel.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/status.h"
#include "common/thread_name.h"
#include "common/tunables.h"
#include "common/version.h"

namespace herald::cluster {

absl::StatusOr<std::unique_ptr<NodeMembership>> NodeMembership::Start(MembershipOptions options) {
  if (options.scheduler_address.find(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("scheduler address '", options.scheduler_address, "' is not host:port"));
  }
  HERALD_ASSIGN_OR_RETURN(auto channel,
                          rpc::MakeChannel(options.scheduler_address, options.channel));
  options.registration.set_wire_version(kWireVersion);
  options.registration.set_version(absl::StrCat(Version(), " (commit ", Commit(), ")"));
  std::unique_ptr<NodeMembership> m(new NodeMembership(std::move(options), std::move(channel)));
  m->thread_ = std::thread([p = m.get()] {
    NameThisThread("membership");
    p->Run();
  });
  return m;
}

NodeMembership::NodeMembership(MembershipOptions options, std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      channel_(std::move(channel)),
      stub_(proto::Coordinator::NewStub(channel_)) {}

NodeMembership::~NodeMembership() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

bool NodeMembership::TryRegister() {
  grpc::ClientContext context;
  rpc::SetDeadline(&context, tunables::kMembershipCallDeadlineMs);
  rpc::AttachToken(&context, options_.token);
  proto::RegisterResponse response;
  const absl::Status s =
      rpc::FromGrpcStatus(stub_->Register(&context, options_.registration, &response));
  absl::MutexLock lock(&mu_);
  if (!s.ok()) {
    if (s.code() != last_error_.code() || s.message() != last_error_.message()) {
      if (absl::IsFailedPrecondition(s)) {  // a refusal (another release): no retry helps
        HLOG_ERROR("registering with the scheduler at {}: {}", options_.scheduler_address,
                   s.ToString());
      } else {
        HLOG_WARN("registering with the scheduler at {}: {}", options_.scheduler_address,
                  s.ToString());
      }
    }
    last_error_ = s;
    return false;
  }
  if (!SpeaksWireVersion(response.wire_version())) {
    const absl::Status refused = absl::FailedPreconditionError(
        absl::StrCat("the scheduler at ", options_.scheduler_address, " is herald ",
                     response.version().empty() ? "older than 0.29.0" : response.version(),
                     " speaking wire version ", response.wire_version(), "; this node is herald ",
                     Version(), " (commit ", Commit(), ") speaking wire version ", kWireVersion,
                     ": run one release on every node of the cluster"));
    if (refused.message() != last_error_.message()) HLOG_ERROR("{}", refused.ToString());
    last_error_ = refused;
    return false;
  }
  HLOG_INFO("registered with the scheduler at {} as {} (rank {})", options_.scheduler_address,
            response.node_id(), response.rank());
  response_ = response;
  registered_ = true;
  ++registrations_;
  return true;
}

bool NodeMembership::Heartbeat() {
  grpc::ClientContext context;
  rpc::SetDeadline(&context, tunables::kMembershipCallDeadlineMs);
  rpc::AttachToken(&context, options_.token);
  proto::HeartbeatRequest request;
  request.set_node_id(node_id());
  request.set_address(options_.registration.address());
  proto::HeartbeatResponse response;
  const grpc::Status s = stub_->Heartbeat(&context, request, &response);
  if (!s.ok()) {
    HLOG_WARN("heartbeat to {}: {}", options_.scheduler_address, s.error_message());
    return true;  // the scheduler may be back soon; it still knows us
  }
  if (!response.known()) {
    HLOG_WARN("the scheduler forgot {}: registering again", request.node_id());
    absl::MutexLock lock(&mu_);
    registered_ = false;  // WaitRegistered waits for the new id
  }
  return response.known();
}

void NodeMembership::Run() {
  bool registered = false;
  for (;;) {
    absl::Duration pause = options_.retry;
    if (!registered) {
      registered = TryRegister();
    } else {
      registered = Heartbeat();
    }
    if (registered) {
      absl::MutexLock lock(&mu_);
      pause = absl::Milliseconds(std::max<uint32_t>(50, response_.heartbeat_interval_ms()));
    }
    if (!registered) pause = options_.retry;
    absl::MutexLock lock(&mu_);
    auto stop = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stop), pause)) return;
  }
}

absl::StatusOr<proto::RegisterResponse> NodeMembership::WaitRegistered(absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  auto done = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return registered_; };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), wait)) {
    return absl::DeadlineExceededError(absl::StrCat("not registered with the scheduler at ",
                                                    options_.scheduler_address, ": ",
                                                    last_error_.ToString()));
  }
  return response_;
}

std::string NodeMembership::node_id() const {
  absl::MutexLock lock(&mu_);
  return response_.node_id();
}

int NodeMembership::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

}  // namespace herald::cluster
