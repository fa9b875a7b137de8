#pragma once
// What every RowExchanger test checks, whatever the transport: `rounds`
// exchanges of bytes of different sizes (some pairs nothing; from rank 0 in
// round 2 a 1 MiB payload), each rank getting exactly what each other sent
// it, then a call that sends to itself refused before anything moves, then
// a size the receiver did not expect named by the receiver.
// Rank `rank` runs it on its own thread while the others run theirs. And
// started exchanges: two ranks on one thread, and a deadline.

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "worker/collectives/row_exchanger.h"

namespace herald::worker::testing {

// What rank `from` sends rank `to` in round `round` (empty for some pairs).
inline std::string Payload(int from, int to, int round) {
  if (from == to || (from + to + round) % 3 == 0) return "";
  const size_t big = round == 2 && from == 0 ? 1 << 20 : 0;
  return absl::StrCat("r", round, ":", from, "->", to, std::string(from * 100 + to + big, 'x'));
}

inline absl::Status ExchangeRounds(RowExchanger& exchanger, int rank, int size, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::string> send(size);
    std::vector<size_t> expect(size);
    for (int o = 0; o < size; ++o) {
      send[o] = Payload(rank, o, round);
      expect[o] = Payload(o, rank, round).size();
    }
    absl::StatusOr<std::vector<std::string>> got = exchanger.Exchange(send, expect);
    if (!got.ok()) return got.status();
    for (int o = 0; o < size; ++o) {
      if ((*got)[o] != Payload(o, rank, round)) {
        return absl::InternalError(
            absl::StrCat("rank ", rank, " round ", round, ": wrong bytes from ", o));
      }
    }
  }
  std::vector<std::string> self(size);
  self[rank] = "me";
  if (exchanger.Exchange(self, std::vector<size_t>(size, 0)).status().code() !=
      absl::StatusCode::kInvalidArgument) {
    return absl::InternalError("sending to itself was not refused");
  }
  // A round where rank 1 expects 5 bytes from rank 0, which sends 4: rank 1
  // names it, and no rank hangs or dies.
  std::vector<std::string> send(size);
  std::vector<size_t> expect(size, 0);
  if (rank == 0) send[1] = "four";
  if (rank == 1) expect[0] = 5;
  absl::StatusOr<std::vector<std::string>> wrong = exchanger.Exchange(send, expect);
  if (rank == 1 && (wrong.ok() || wrong.status().message().find(
                                      "rank 0 sent 4 bytes, expected 5") == std::string::npos)) {
    return absl::InternalError(
        absl::StrCat("a wrong size was not named: ", wrong.status().ToString()));
  }
  if (rank != 1 && !wrong.ok()) return wrong.status();
  return absl::OkStatus();
}

// Ranks 0 and 1 of a two-rank job, connected through `store` (each
// Connect waits for the other, so rank 1 connects on a thread).
template <typename Exchanger, typename Options>
absl::Status ConnectPair(KvStore* store, const Options& options, std::unique_ptr<Exchanger>* zero,
                         std::unique_ptr<Exchanger>* one) {
  absl::StatusOr<std::unique_ptr<Exchanger>> second;
  std::thread connect([&] { second = Exchanger::Connect(store, 1, 2, options); });
  absl::StatusOr<std::unique_ptr<Exchanger>> first = Exchanger::Connect(store, 0, 2, options);
  connect.join();
  if (!first.ok()) return first.status();
  if (!second.ok()) return second.status();
  *zero = *std::move(first);
  *one = *std::move(second);
  return absl::OkStatus();
}

// Two ranks driven from one thread: rank 0 starts an exchange, then rank 1
// starts its part (a Start that waited for its peers would never return
// here), then both wait and get each other's bytes. Then rank 0 alone
// starts one with a deadline 300 ms away: its Wait fails UNAVAILABLE
// instead of waiting for the silent rank 1.
inline absl::Status StartedExchangesOnOneThread(RowExchanger& zero, RowExchanger& one) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  PendingCall<RowExchanger::Received> a = zero.Start({"", "zero->one"}, {0, 9}, deadline);
  PendingCall<RowExchanger::Received> b = one.Start({"one->zero", ""}, {9, 0}, deadline);
  RowExchanger::Received got_b = b.Wait();
  RowExchanger::Received got_a = a.Wait();
  if (!got_a.ok()) return got_a.status();
  if (!got_b.ok()) return got_b.status();
  if ((*got_a)[1] != "one->zero" || (*got_b)[0] != "zero->one") {
    return absl::InternalError("the started exchanges delivered the wrong bytes");
  }
  RowExchanger::Received alone =
      zero.Start({"", ""}, {0, 0}, absl::Now() + absl::Milliseconds(300)).Wait();
  if (alone.status().code() != absl::StatusCode::kUnavailable) {
    return absl::InternalError(
        absl::StrCat("an exchange past its deadline gave ", alone.status().ToString()));
  }
  return absl::OkStatus();
}

// Runs rank(r) for every r in [0, size) on a thread of its own, as the
// ranks of a job would, and returns each one's status.
inline std::vector<absl::Status> RunRanks(int size, const std::function<absl::Status(int)>& rank) {
  std::vector<absl::Status> results(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) threads.emplace_back([&, r] { results[r] = rank(r); });
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace herald::worker::testing
