#pragma once
// The row exchange (row_exchanger.h) over UCX instead of a Gloo all-to-all:
// each rank sends each peer its bytes as one message (all peers at once) and
// waits for one message from each peer, so a rank waits only for the peers
// that owe it rows, not for a collective over every pair. Ranks find each
// other through the store (each publishes its UCX address under
// "<prefix>/ucx/<rank>"); the cluster token guards every connection.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/ucx/ucx_rpc.h"
#include "worker/collectives/kv_store.h"
#include "worker/collectives/row_exchanger.h"

namespace herald::worker {

struct UcxExchangeOptions {
  std::string prefix = "rows";
  std::string token;
  ucx::UcxWorker::Options ucx;
  absl::Duration timeout = absl::Seconds(60);  // connecting, and each exchange
};

class UcxRowExchanger final : public RowExchanger {
 public:
  // Blocks until every rank published its address and this one connected
  // to all others. Errors: UCX's, the store's (DeadlineExceeded).
  static absl::StatusOr<std::unique_ptr<UcxRowExchanger>> Connect(
      KvStore* store, int rank, int size, const UcxExchangeOptions& options);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  absl::Duration timeout() const override { return timeout_; }
  // Sends every peer its message at once (no thread); Wait waits for the
  // peers' acknowledgements and for every peer's message of this round.
  // An exchange started and never waited for leaves its round's messages
  // until the exchanger is destroyed.
  PendingCall<Received> Start(std::vector<std::string> send, std::vector<size_t> receive_bytes,
                              absl::Time deadline) override;
  void Cancel(const std::string& why) override;

 private:
  UcxRowExchanger(int rank, int size, absl::Duration timeout)
      : rank_(rank), size_(size), timeout_(timeout) {}
  // A peer's message for round `round` (the server's handler).
  absl::Status Deliver(uint64_t round, uint32_t from, std::string bytes);
  // Start's second half: the sends' outcomes (`calls`), then the round's
  // messages.
  Received Finish(uint64_t round, const std::vector<uint64_t>& calls,
                  const std::vector<size_t>& receive_bytes, absl::Time deadline);
  // `s` with this rank's place in the exchange, its code kept.
  absl::Status Failed(const absl::Status& s) const;

  const int rank_, size_;
  const absl::Duration timeout_;
  uint64_t round_ = 0;  // exchanges so far (Start is called from one thread)
  absl::Mutex mu_;
  std::map<std::pair<uint64_t, uint32_t>, std::string> inbox_ ABSL_GUARDED_BY(mu_);
  std::string cancelled_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ucx::UcxRpcServer> server_;
  std::unique_ptr<ucx::UcxRpcClient> client_;  // server i = peer_of_[i]
  std::vector<int> index_of_;                  // rank -> client server index (-1: self)
};

}  // namespace herald::worker
