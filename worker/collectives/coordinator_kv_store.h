#pragma once
// KvStore over the scheduler's rendezvous RPC (Coordinator.KvSet/KvGet),
// every key under one scope (the job id). Contract with the server: KvGet
// blocks until every key exists or `wait_ms` passes, then answers
// DEADLINE_EXCEEDED naming the missing keys.

#include <memory>
#include <string>

#include "proto/scheduler.grpc.pb.h"
#include "worker/collectives/kv_store.h"

namespace herald::worker {

class CoordinatorKvStore final : public KvStore {
 public:
  // `token`: the cluster token sent with every call (empty: none).
  CoordinatorKvStore(std::shared_ptr<proto::Coordinator::StubInterface> stub, std::string scope,
                     std::string token = "");

  absl::Status Set(const std::string& key, const std::string& value) override;
  absl::StatusOr<std::vector<std::string>> Get(const std::vector<std::string>& keys,
                                               absl::Duration timeout) override;

 private:
  std::shared_ptr<proto::Coordinator::StubInterface> stub_;
  std::string scope_;
  std::string token_;
};

}  // namespace herald::worker
