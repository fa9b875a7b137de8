#include "scheduler/membership/node_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace herald::scheduler {
namespace {

const char* RoleName(proto::NodeRole role) { return role == proto::NODE_ROLE_PS ? "ps" : "worker"; }

}  // namespace

NodeRegistry::NodeRegistry(absl::Duration liveness_timeout, std::function<absl::Time()> clock)
    : timeout_(liveness_timeout), clock_(std::move(clock)) {}

bool NodeRegistry::AliveLocked(const NodeInfo& node) const {
  return clock_() - node.last_heartbeat <= timeout_;
}

absl::StatusOr<NodeInfo> NodeRegistry::Register(const proto::RegisterRequest& request) {
  if (request.role() != proto::NODE_ROLE_PS && request.role() != proto::NODE_ROLE_WORKER) {
    return absl::InvalidArgumentError("role: must be PS or WORKER");
  }
  if (request.address().empty() || request.address().find(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("address: '", request.address(), "' is not host:port"));
  }
  absl::MutexLock lock(&mu_);
  // Drop this node's earlier entry (a restart) before choosing the rank.
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    const auto& r = it->second.registration;
    if (r.role() == request.role() && r.address() == request.address()) {
      nodes_.erase(it++);
    } else {
      ++it;
    }
  }
  auto holder = [&](uint32_t rank) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> NodeInfo* {
    for (auto& [id, node] : nodes_) {
      if (node.registration.role() == request.role() && node.rank == rank) return &node;
    }
    return nullptr;
  };
  uint32_t rank = 0;
  if (request.requested_rank() >= 0) {
    rank = static_cast<uint32_t>(request.requested_rank());
    if (NodeInfo* other = holder(rank); other != nullptr) {
      if (AliveLocked(*other)) {
        return absl::AlreadyExistsError(absl::StrCat(RoleName(request.role()), " rank ", rank,
                                                     " is held by live node ", other->node_id,
                                                     " at ", other->registration.address()));
      }
      nodes_.erase(other->node_id);
    }
  } else {
    for (;; ++rank) {
      NodeInfo* other = holder(rank);
      if (other == nullptr) break;
      if (!AliveLocked(*other)) {
        nodes_.erase(other->node_id);
        break;
      }
    }
  }
  NodeInfo node;
  node.node_id = absl::StrCat(RoleName(request.role()), "-", rank, "-", next_id_++);
  node.registration = request;
  node.rank = rank;
  node.last_heartbeat = clock_();
  nodes_[node.node_id] = node;
  return node;
}

bool NodeRegistry::Heartbeat(const std::string& node_id, const std::string& address) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return false;
  if (!address.empty() && it->second.registration.address() != address) return false;
  it->second.last_heartbeat = clock_();
  ++it->second.heartbeats;
  return true;
}

bool NodeRegistry::IsAlive(const std::string& node_id) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  return it != nodes_.end() && AliveLocked(it->second);
}

std::vector<NodeInfo> NodeRegistry::Alive(proto::NodeRole role) const {
  absl::MutexLock lock(&mu_);
  std::vector<NodeInfo> out;
  for (const auto& [id, node] : nodes_) {
    if (node.registration.role() == role && AliveLocked(node)) out.push_back(node);
  }
  std::sort(out.begin(), out.end(),
            [](const NodeInfo& a, const NodeInfo& b) { return a.rank < b.rank; });
  return out;
}

std::vector<proto::NodeStatus> NodeRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<proto::NodeStatus> out;
  for (const auto& [id, node] : nodes_) {
    proto::NodeStatus s;
    s.set_node_id(node.node_id);
    s.set_role(node.registration.role());
    s.set_rank(node.rank);
    s.set_address(node.registration.address());
    s.set_device(node.registration.device());
    s.set_alive(AliveLocked(node));
    s.set_last_heartbeat_unix_ms(absl::ToUnixMillis(node.last_heartbeat));
    s.set_cache_memory_bytes(node.registration.cache_memory_bytes());
    s.set_device_memory_bytes(node.registration.device_memory_bytes());
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const proto::NodeStatus& a, const proto::NodeStatus& b) {
    return std::make_pair(a.role(), a.rank()) < std::make_pair(b.role(), b.rank());
  });
  return out;
}

absl::StatusOr<NodeInfo> NodeRegistry::Get(const std::string& node_id) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) {
    return absl::NotFoundError(absl::StrCat("node ", node_id, " is not registered"));
  }
  return it->second;
}

}  // namespace herald::scheduler
