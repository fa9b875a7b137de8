// Three ranks over a real Gloo TCP mesh on 127.0.0.1 exchange bytes of
// different sizes (some pairs nothing), twice over one connection.

#include "worker/collectives/row_exchanger.h"

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace herald::worker {
namespace {

// What rank `from` sends rank `to` in round `round` (empty for some pairs).
std::string Payload(int from, int to, int round) {
  if (from == to || (from + to + round) % 3 == 0) return "";
  return absl::StrCat("r", round, ":", from, "->", to, std::string(from * 100 + to, 'x'));
}

TEST(GlooRowExchanger, EveryRankGetsWhatEachOtherSentIt) {
  const int size = 3;
  InProcessKvStore store;
  std::vector<absl::Status> results(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      GlooOptions options;
      options.prefix = "rows";
      auto exchanger = GlooRowExchanger::Connect(&store, r, size, options);
      if (!exchanger.ok()) {
        results[r] = exchanger.status();
        return;
      }
      for (int round = 0; round < 2; ++round) {
        std::vector<std::string> send(size);
        std::vector<size_t> expect(size);
        for (int o = 0; o < size; ++o) {
          send[o] = Payload(r, o, round);
          expect[o] = Payload(o, r, round).size();
        }
        auto got = (*exchanger)->Exchange(send, expect);
        if (!got.ok()) {
          results[r] = got.status();
          return;
        }
        for (int o = 0; o < size; ++o) {
          if ((*got)[o] != Payload(o, r, round)) {
            results[r] = absl::InternalError(
                absl::StrCat("rank ", r, " round ", round, ": wrong bytes from ", o));
            return;
          }
        }
      }
      // Bad sizes are refused before anything moves.
      std::vector<std::string> self(size);
      self[r] = "me";
      auto bad = (*exchanger)->Exchange(self, std::vector<size_t>(size, 0));
      if (bad.status().code() != absl::StatusCode::kInvalidArgument) {
        results[r] = absl::InternalError("sending to itself was not refused");
      }
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) EXPECT_TRUE(results[r].ok()) << r << ": " << results[r];
}

}  // namespace
}  // namespace herald::worker
