#include "scheduler/jobs/dense_collective.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace herald::scheduler {

proto::DenseCollective ChooseDenseCollective(const std::vector<proto::RegisterRequest>& workers) {
  if (workers.size() < 2) return proto::DENSE_COLLECTIVE_GLOO;
  absl::flat_hash_set<std::pair<std::string, std::string>> gpus;  // (host, GPU UUID)
  for (const proto::RegisterRequest& w : workers) {
    if (w.device() != proto::DEVICE_KIND_CUDA || w.device_uuid().empty()) {
      return proto::DENSE_COLLECTIVE_GLOO;
    }
    if (!gpus.insert({w.hostname(), w.device_uuid()}).second) {
      return proto::DENSE_COLLECTIVE_GLOO;  // two workers share a GPU
    }
  }
  return proto::DENSE_COLLECTIVE_NCCL;
}

}  // namespace herald::scheduler
