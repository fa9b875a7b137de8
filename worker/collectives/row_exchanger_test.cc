// Three ranks over a real Gloo TCP mesh on 127.0.0.1 exchange bytes of
// different sizes (some pairs nothing), three times over one connection
// (row_exchanger_testing.h).

#include "worker/collectives/row_exchanger.h"

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "worker/collectives/row_exchanger_testing.h"

namespace herald::worker {
namespace {

TEST(GlooRowExchanger, EveryRankGetsWhatEachOtherSentIt) {
  const int size = 3;
  InProcessKvStore store;
  const std::vector<absl::Status> results = testing::RunRanks(size, [&](int r) -> absl::Status {
    GlooOptions options;
    options.prefix = "rows";
    auto exchanger = GlooRowExchanger::Connect(&store, r, size, options);
    if (!exchanger.ok()) return exchanger.status();
    return testing::ExchangeRounds(**exchanger, r, size, /*rounds=*/3);
  });
  for (int r = 0; r < size; ++r) EXPECT_TRUE(results[r].ok()) << r << ": " << results[r];
}

TEST(GlooRowExchanger, StartedExchangesOverlapAndEndByTheirDeadline) {
  InProcessKvStore store;
  GlooOptions options;
  options.prefix = "rows";
  std::unique_ptr<GlooRowExchanger> zero, one;
  ASSERT_TRUE(testing::ConnectPair(&store, options, &zero, &one).ok());
  absl::Status s = testing::StartedExchangesOnOneThread(*zero, *one);
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace herald::worker
