#include "worker/collectives/row_exchanger.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "gloo/alltoall.h"
#include "gloo/alltoallv.h"

namespace herald::worker {

absl::Status CheckExchangeArguments(const std::vector<std::string>& send,
                                    const std::vector<size_t>& receive_bytes, int rank, int size) {
  if (send.size() != static_cast<size_t>(size) ||
      receive_bytes.size() != static_cast<size_t>(size)) {
    return absl::InvalidArgumentError(absl::StrCat("row exchange: ", send.size(), " send and ",
                                                   receive_bytes.size(), " receive sizes for ",
                                                   size, " ranks"));
  }
  if (!send[rank].empty() || receive_bytes[rank] != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("row exchange: rank ", rank, " sends bytes to itself"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<GlooRowExchanger>> GlooRowExchanger::Connect(
    KvStore* store, int rank, int size, const GlooOptions& options) {
  absl::StatusOr<std::shared_ptr<gloo::Context>> context = ConnectGloo(store, rank, size, options);
  if (!context.ok()) return context.status();
  return std::unique_ptr<GlooRowExchanger>(
      new GlooRowExchanger(rank, size, options.timeout, *std::move(context)));
}

PendingCall<RowExchanger::Received> GlooRowExchanger::Start(std::vector<std::string> send,
                                                            std::vector<size_t> receive_bytes,
                                                            absl::Time deadline) {
  if (absl::Status s = CheckExchangeArguments(send, receive_bytes, rank_, size_); !s.ok()) {
    return PendingCall<Received>::Done(s);
  }
  return StartOnThread<Received>([this, send = std::move(send),
                                  receive_bytes = std::move(receive_bytes),
                                  deadline] { return AllToAll(send, receive_bytes, deadline); });
}

RowExchanger::Received GlooRowExchanger::AllToAll(const std::vector<std::string>& send,
                                                  const std::vector<size_t>& receive_bytes,
                                                  absl::Time deadline) {
  auto time_left = [deadline] {
    return std::chrono::milliseconds(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - absl::Now())));
  };
  // First every rank tells every other how many bytes it sends (one u64
  // per pair): a size the plan did not expect is then received anyway and
  // named, where Gloo would abort the process on a message longer than the
  // buffer waiting for it.
  std::vector<uint64_t> sizes_out(size_), sizes_in(size_);
  for (int r = 0; r < size_; ++r) sizes_out[r] = send[r].size();
  std::vector<int64_t> out_counts(size_), in_counts(size_);
  out_.clear();
  size_t in_total = 0;
  try {
    gloo::AlltoallOptions sizes(context_);
    sizes.setInput(sizes_out.data(), sizes_out.size());
    sizes.setOutput(sizes_in.data(), sizes_in.size());
    sizes.setTag(4);
    sizes.setTimeout(time_left());
    gloo::alltoall(sizes);
    for (int r = 0; r < size_; ++r) {
      out_counts[r] = static_cast<int64_t>(send[r].size());
      out_ += send[r];
      in_counts[r] = static_cast<int64_t>(sizes_in[r]);
      in_total += sizes_in[r];
    }
    in_.assign(in_total, '\0');
    // Gloo wants a buffer per direction even when nothing moves.
    uint8_t empty = 0;
    gloo::AlltoallvOptions options(context_);
    options.setInput(out_.empty() ? &empty : reinterpret_cast<uint8_t*>(out_.data()), out_counts);
    options.setOutput(in_.empty() ? &empty : reinterpret_cast<uint8_t*>(in_.data()), in_counts);
    options.setTag(3);
    options.setTimeout(time_left());
    gloo::alltoallv(options);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("row exchange at rank ", rank_, " of ", size_, ": ", e.what()));
  }
  std::vector<std::string> received(size_);
  size_t at = 0;
  for (int r = 0; r < size_; ++r) {
    if (sizes_in[r] != receive_bytes[r]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "row exchange: rank ", r, " sent ", sizes_in[r], " bytes, expected ", receive_bytes[r]));
    }
    received[r] = in_.substr(at, sizes_in[r]);
    at += sizes_in[r];
  }
  return received;
}

}  // namespace herald::worker
