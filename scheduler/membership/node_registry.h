#pragma once
// The cluster's members: PS shards and workers register (address, rank,
// device, memory) and then heartbeat; a node whose last heartbeat is older
// than the liveness timeout is dead. Thread-safe.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/scheduler.pb.h"

namespace herald::scheduler {

struct NodeInfo {
  std::string node_id;
  proto::RegisterRequest registration;
  uint32_t rank = 0;
  absl::Time last_heartbeat;
  // Heartbeats received since it registered. A node sends the next only
  // after the answer to the last, so a dead node's count grows by at most
  // one after its death (one that was in flight).
  uint64_t heartbeats = 0;
};

class NodeRegistry {
 public:
  // `clock` is injectable so liveness is testable without sleeping.
  explicit NodeRegistry(
      absl::Duration liveness_timeout,
      std::function<absl::Time()> clock = [] { return absl::Now(); });

  // Rank: `requested_rank` if ≥ 0, else the lowest rank of the role no live
  // node holds. A node registering again from the same role and address
  // replaces its old entry (it restarted); so does one taking the rank of a
  // dead node. Errors: InvalidArgument (role, address), AlreadyExists (the
  // rank is held by a live node at another address).
  absl::StatusOr<NodeInfo> Register(const proto::RegisterRequest& request);

  // False for an unknown node (it must register again), or an id held by
  // a node registered from another address than `address` (ids repeat
  // across scheduler restarts; empty: not checked).
  bool Heartbeat(const std::string& node_id, const std::string& address);

  bool IsAlive(const std::string& node_id) const;
  // Live nodes of `role`, by rank.
  std::vector<NodeInfo> Alive(proto::NodeRole role) const;
  // Every registered node, alive or not, by role then rank.
  std::vector<proto::NodeStatus> List() const;
  absl::StatusOr<NodeInfo> Get(const std::string& node_id) const;

  absl::Duration liveness_timeout() const { return timeout_; }

 private:
  bool AliveLocked(const NodeInfo& node) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const absl::Duration timeout_;
  const std::function<absl::Time()> clock_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, NodeInfo> nodes_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace herald::scheduler
