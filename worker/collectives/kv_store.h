#pragma once
// The key-value store collectives bootstrap through (Gloo addresses, NCCL
// unique ids). In production it is the scheduler's rendezvous RPC
// (CoordinatorKvStore); tests use InProcessKvStore. Keys are scoped by the
// implementation (e.g. per job), values are opaque bytes.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace herald::worker {

class KvStore {
 public:
  virtual ~KvStore() = default;
  // Overwrites an existing key.
  virtual absl::Status Set(const std::string& key, const std::string& value) = 0;
  // Values of all `keys`, in order, once every one exists. Errors:
  // DeadlineExceeded naming the missing keys when `timeout` passes first.
  virtual absl::StatusOr<std::vector<std::string>> Get(const std::vector<std::string>& keys,
                                                       absl::Duration timeout) = 0;
};

// Thread-safe map in this process.
class InProcessKvStore final : public KvStore {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override;
  absl::StatusOr<std::vector<std::string>> Get(const std::vector<std::string>& keys,
                                               absl::Duration timeout) override;

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::worker
