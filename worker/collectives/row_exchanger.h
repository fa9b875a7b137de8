#pragma once
// Bytes between every pair of a job's workers in one collective step: what
// worker-to-worker hand-offs of embedding rows and gradients travel over
// (laid out by row_packet.h). Every rank starts the same exchanges in the
// same order, and waits for one before it starts the next, so no pair
// waits on another (each rank knows from its plan what it sends and
// receives).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/pending_call.h"
#include "worker/collectives/gloo_context.h"
#include "worker/collectives/kv_store.h"

namespace herald::worker {

class RowExchanger {
 public:
  // Per rank, the bytes it sent this one.
  using Received = absl::StatusOr<std::vector<std::string>>;

  virtual ~RowExchanger() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // How long Exchange waits.
  virtual absl::Duration timeout() const = 0;
  // Starts this rank's part of one exchange and returns at once (the
  // caller computes meanwhile): send[r], the bytes for rank r (send[rank()]
  // empty); receive_bytes[r], how many bytes rank r sends this one. Wait
  // returns what arrived, by `deadline` at the latest. Errors (from Wait):
  // InvalidArgument (sizes; nothing was sent), Unavailable naming the rank
  // (a peer failed, or sent nothing by the deadline), Cancelled.
  virtual PendingCall<Received> Start(std::vector<std::string> send,
                                      std::vector<size_t> receive_bytes, absl::Time deadline) = 0;
  // Start and Wait, with timeout().
  Received Exchange(std::vector<std::string> send, std::vector<size_t> receive_bytes) {
    return Start(std::move(send), std::move(receive_bytes), absl::Now() + timeout()).Wait();
  }
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

// Over a Gloo TCP full mesh of its own ("<prefix>" in the store): an
// all-to-all on a thread of its own per exchange.
class GlooRowExchanger final : public RowExchanger {
 public:
  static absl::StatusOr<std::unique_ptr<GlooRowExchanger>> Connect(KvStore* store, int rank,
                                                                   int size,
                                                                   const GlooOptions& options);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  absl::Duration timeout() const override { return timeout_; }
  PendingCall<Received> Start(std::vector<std::string> send, std::vector<size_t> receive_bytes,
                              absl::Time deadline) override;

 private:
  GlooRowExchanger(int rank, int size, absl::Duration timeout,
                   std::shared_ptr<gloo::Context> context)
      : rank_(rank), size_(size), timeout_(timeout), context_(std::move(context)) {}
  Received AllToAll(const std::vector<std::string>& send, const std::vector<size_t>& receive_bytes,
                    absl::Time deadline);

  const int rank_, size_;
  const absl::Duration timeout_;
  std::shared_ptr<gloo::Context> context_;
  std::string in_, out_;  // reused between exchanges (one at a time)
};

}  // namespace herald::worker
