#pragma once
// Bytes between every pair of a job's workers in one collective step: what
// worker-to-worker hand-offs of embedding rows travel over. Every rank calls
// Exchange once per training step, in the same order, so no pair waits on
// another (each rank knows from its plan what it sends and receives).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/collectives/gloo_context.h"
#include "worker/collectives/kv_store.h"

namespace herald::worker {

class RowExchanger {
 public:
  virtual ~RowExchanger() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // send[r]: the bytes for rank r (send[rank()] must be empty);
  // receive_bytes[r]: how many bytes rank r sends this one. Returns, per
  // rank, the bytes it sent. Errors: InvalidArgument (sizes), Unavailable
  // (a peer failed or timed out).
  virtual absl::StatusOr<std::vector<std::string>> Exchange(
      const std::vector<std::string>& send, const std::vector<size_t>& receive_bytes) = 0;
  // Calls off the job: an exchange waiting now, and every later one, fails
  // with Cancelled(why) where the implementation can (UCX; Gloo fails when
  // a peer's connection closes).
  virtual void Cancel(const std::string& why) {}
};

// The checks every Exchange makes before anything moves: one send and one
// receive size per rank, nothing to or from `rank` itself. Errors:
// InvalidArgument naming what is wrong.
absl::Status CheckExchangeArguments(const std::vector<std::string>& send,
                                    const std::vector<size_t>& receive_bytes, int rank, int size);

// Over a Gloo TCP full mesh of its own ("<prefix>" in the store).
class GlooRowExchanger final : public RowExchanger {
 public:
  static absl::StatusOr<std::unique_ptr<GlooRowExchanger>> Connect(KvStore* store, int rank,
                                                                   int size,
                                                                   const GlooOptions& options);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  absl::StatusOr<std::vector<std::string>> Exchange(
      const std::vector<std::string>& send, const std::vector<size_t>& receive_bytes) override;

 private:
  GlooRowExchanger(int rank, int size, std::shared_ptr<gloo::Context> context)
      : rank_(rank), size_(size), context_(std::move(context)) {}

  int rank_, size_;
  std::shared_ptr<gloo::Context> context_;
  std::string in_, out_;  // reused between calls
};

}  // namespace herald::worker
