// Three ranks exchange bytes of different sizes over UCX (some pairs
// nothing, one payload large enough for rendezvous), three rounds over one
// set of connections; bad sizes are refused before anything moves, and a
// peer that sends a size the plan did not expect is named.

#include "worker/collectives/ucx_row_exchanger.h"

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "worker/collectives/row_exchanger_testing.h"

namespace herald::worker {
namespace {

TEST(UcxRowExchanger, EveryRankGetsWhatEachOtherSentIt) {
  const int size = 3;
  InProcessKvStore store;
  const std::vector<absl::Status> results = testing::RunRanks(size, [&](int r) -> absl::Status {
    UcxExchangeOptions options;
    options.token = "t0k3n";
    options.ucx.loopback_only = true;
    options.timeout = absl::Seconds(30);
    auto exchanger = UcxRowExchanger::Connect(&store, r, size, options);
    if (!exchanger.ok()) return exchanger.status();
    return testing::ExchangeRounds(**exchanger, r, size, /*rounds=*/3);
  });
  for (int r = 0; r < size; ++r) EXPECT_TRUE(results[r].ok()) << r << ": " << results[r];
}

// A peer that is gone fails the exchange with UNAVAILABLE naming it, at
// once (over TCP UCX reports the dead connection), not at the deadline.
TEST(UcxRowExchanger, APeerThatIsGoneIsNamed) {
  InProcessKvStore store;
  UcxExchangeOptions options;
  options.ucx.loopback_only = true;
  options.timeout = absl::Seconds(60);
  std::unique_ptr<UcxRowExchanger> zero, peer;
  ASSERT_TRUE(testing::ConnectPair(&store, options, &zero, &peer).ok());
  peer.reset();  // rank 1 goes away
  const absl::Time start = absl::Now();
  auto got = zero->Exchange({"", "rows for rank 1"}, {0, 8});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable) << got.status();
  EXPECT_NE(got.status().message().find("rank 1"), std::string::npos) << got.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(30)) << "waited for the deadline";
}

TEST(UcxRowExchanger, StartedExchangesOverlapAndEndByTheirDeadline) {
  InProcessKvStore store;
  UcxExchangeOptions options;
  options.ucx.loopback_only = true;
  std::unique_ptr<UcxRowExchanger> zero, one;
  ASSERT_TRUE(testing::ConnectPair(&store, options, &zero, &one).ok());
  absl::Status s = testing::StartedExchangesOnOneThread(*zero, *one);
  EXPECT_TRUE(s.ok()) << s;
}

// A job called off ends a waiting exchange with CANCELLED.
TEST(UcxRowExchanger, CancelEndsAWaitingExchange) {
  InProcessKvStore store;
  UcxExchangeOptions options;
  options.ucx.loopback_only = true;
  std::unique_ptr<UcxRowExchanger> zero, silent;
  ASSERT_TRUE(testing::ConnectPair(&store, options, &zero, &silent).ok());
  // Rank 1 never exchanges; rank 0 waits until it is called off.
  std::thread cancel([&] { zero->Cancel("the job ended"); });
  auto got = zero->Exchange({"", ""}, {0, 0});
  cancel.join();
  EXPECT_TRUE(got.status().code() == absl::StatusCode::kCancelled) << got.status();
}

}  // namespace
}  // namespace herald::worker
