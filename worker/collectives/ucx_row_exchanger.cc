#include "worker/collectives/ucx_row_exchanger.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace herald::worker {
namespace {

// A message: the round (u64), the sender's rank (u32), 4 bytes of padding,
// then the bytes.
constexpr size_t kHeader = 16;

}  // namespace

absl::StatusOr<std::unique_ptr<UcxRowExchanger>> UcxRowExchanger::Connect(
    KvStore* store, int rank, int size, const UcxExchangeOptions& options) {
  std::unique_ptr<UcxRowExchanger> x(new UcxRowExchanger(rank, size, options.timeout));
  UcxRowExchanger* self = x.get();
  ucx::RpcServerOptions server;
  server.token = options.token;
  server.ucx = options.ucx;
  HERALD_ASSIGN_OR_RETURN(
      x->server_, ucx::UcxRpcServer::Start(
                      server, [self](ucx::AlignedBuffer m) -> absl::StatusOr<ucx::AlignedBuffer> {
                        if (m.size() < kHeader) {
                          return absl::InvalidArgumentError(
                              absl::StrCat("row exchange: a ", m.size(), "-byte message"));
                        }
                        uint64_t round;
                        uint32_t from;
                        std::memcpy(&round, m.data(), 8);
                        std::memcpy(&from, m.data() + 8, 4);
                        HERALD_RETURN_IF_ERROR(self->Deliver(
                            round, from, std::string(m.data() + kHeader, m.size() - kHeader)));
                        return ucx::AlignedBuffer();
                      }));
  const std::string key = absl::StrCat(options.prefix, "/ucx/");
  HERALD_RETURN_IF_ERROR(store->Set(absl::StrCat(key, rank), x->server_->address()));
  std::vector<std::string> keys;
  for (int r = 0; r < size; ++r) keys.push_back(absl::StrCat(key, r));
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> addresses, store->Get(keys, options.timeout));
  std::vector<std::string> peers, names;
  x->index_of_.assign(size, -1);
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    x->index_of_[r] = static_cast<int>(peers.size());
    peers.push_back(addresses[r]);
    names.push_back(absl::StrCat("worker rank ", r));
  }
  HERALD_ASSIGN_OR_RETURN(x->client_, ucx::UcxRpcClient::Connect(peers, names, options.token,
                                                                 options.timeout, options.ucx));
  return x;
}

void UcxRowExchanger::Cancel(const std::string& why) {
  client_->CancelAll(why);
  absl::MutexLock lock(&mu_);
  cancelled_ = why.empty() ? "cancelled" : why;
}

absl::Status UcxRowExchanger::Deliver(uint64_t round, uint32_t from, std::string bytes) {
  if (from >= static_cast<uint32_t>(size_) || from == static_cast<uint32_t>(rank_)) {
    return absl::InvalidArgumentError(absl::StrCat("row exchange: a message from rank ", from));
  }
  absl::MutexLock lock(&mu_);
  if (!inbox_.emplace(std::make_pair(round, from), std::move(bytes)).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("row exchange: rank ", from, " sent round ", round, " twice"));
  }
  return absl::OkStatus();
}

absl::Status UcxRowExchanger::Failed(const absl::Status& s) const {
  return absl::Status(
      s.code(), absl::StrCat("row exchange at rank ", rank_, " of ", size_, ": ", s.message()));
}

PendingCall<RowExchanger::Received> UcxRowExchanger::Start(std::vector<std::string> send,
                                                           std::vector<size_t> receive_bytes,
                                                           absl::Time deadline) {
  if (absl::Status s = CheckExchangeArguments(send, receive_bytes, rank_, size_); !s.ok()) {
    return PendingCall<Received>::Done(s);
  }
  const uint64_t round = ++round_;
  // Every peer gets a message, empty or not, so each knows the round is over.
  std::vector<uint64_t> calls;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    ucx::AlignedBuffer m(kHeader + send[r].size());
    const uint32_t from = static_cast<uint32_t>(rank_), pad = 0;
    std::memcpy(m.data(), &round, 8);
    std::memcpy(m.data() + 8, &from, 4);
    std::memcpy(m.data() + 12, &pad, 4);
    if (!send[r].empty()) std::memcpy(m.data() + kHeader, send[r].data(), send[r].size());
    absl::StatusOr<uint64_t> call = client_->Start(static_cast<size_t>(index_of_[r]), std::move(m));
    if (!call.ok()) {
      for (uint64_t c : calls) client_->Forget(c);
      return PendingCall<Received>::Done(Failed(call.status()));
    }
    calls.push_back(*call);
  }
  return PendingCall<Received>(
      [this, round, calls = std::move(calls), receive_bytes = std::move(receive_bytes), deadline] {
        return Finish(round, calls, receive_bytes, deadline);
      });
}

RowExchanger::Received UcxRowExchanger::Finish(uint64_t round, const std::vector<uint64_t>& calls,
                                               const std::vector<size_t>& receive_bytes,
                                               absl::Time deadline) {
  absl::Status first_error;
  for (uint64_t c : calls) {
    if (!first_error.ok()) {
      client_->Forget(c);
      continue;
    }
    // Its code kept: UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED.
    first_error = client_->Wait(c, std::max(deadline - absl::Now(), absl::ZeroDuration())).status();
  }
  if (!first_error.ok()) return Failed(first_error);
  std::vector<std::string> received(size_);
  absl::MutexLock lock(&mu_);
  auto all_in = [this, round]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    if (!cancelled_.empty()) return true;
    for (int r = 0; r < size_; ++r) {
      if (r != rank_ && inbox_.count({round, static_cast<uint32_t>(r)}) == 0) return false;
    }
    return true;
  };
  // Wait in slices: a peer whose connection failed (it died) ends the wait.
  while (!mu_.AwaitWithTimeout(absl::Condition(&all_in), absl::Milliseconds(100))) {
    for (int r = 0; r < size_; ++r) {
      std::string why;
      if (r == rank_ || inbox_.count({round, static_cast<uint32_t>(r)}) > 0 ||
          !client_->Failed(static_cast<size_t>(index_of_[r]), &why)) {
        continue;
      }
      return absl::UnavailableError(absl::StrCat("row exchange at rank ", rank_, " of ", size_,
                                                 ": rank ", r, " is gone: ", why));
    }
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(absl::StrCat("row exchange at rank ", rank_, " of ", size_,
                                                 ": a peer sent nothing for round ", round,
                                                 " by the deadline"));
    }
  }
  if (!cancelled_.empty()) return absl::CancelledError(cancelled_);
  // The round's messages leave the inbox whatever they hold.
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    auto it = inbox_.find({round, static_cast<uint32_t>(r)});
    received[r] = std::move(it->second);
    inbox_.erase(it);
  }
  for (int r = 0; r < size_; ++r) {
    if (received[r].size() != receive_bytes[r]) {
      return absl::InvalidArgumentError(absl::StrCat("row exchange: rank ", r, " sent ",
                                                     received[r].size(), " bytes, expected ",
                                                     receive_bytes[r]));
    }
  }
  return received;
}

}  // namespace herald::worker
