#pragma once
// The rendezvous key-value store behind Coordinator.KvSet/KvGet, used by
// workers to bootstrap Gloo/NCCL. Keys live in scopes (one per job) that the
// job manager drops when the job ends. Thread-safe.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace herald::scheduler {

class KvRendezvous {
 public:
  static constexpr size_t kMaxValueBytes = 1 << 20;
  static constexpr size_t kMaxKeysPerScope = 65536;

  // Overwrites. Errors: InvalidArgument (empty scope or key),
  // ResourceExhausted (value or scope over the limits above).
  absl::Status Set(const std::string& scope, const std::string& key, std::string value);

  // Values of `keys` in order, waiting up to `wait` for all of them.
  // Errors: DeadlineExceeded naming the missing keys.
  absl::StatusOr<std::vector<std::string>> Get(const std::string& scope,
                                               const std::vector<std::string>& keys,
                                               absl::Duration wait);

  void DropScope(const std::string& scope);

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, std::string>> scopes_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::scheduler
