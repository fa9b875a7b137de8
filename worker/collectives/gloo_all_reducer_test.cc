#include "worker/collectives/gloo_all_reducer.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace herald::worker {
namespace {

TEST(GlooAllReducer, ThreeRanksGetTheRankOrderSumWithTheSameBits) {
  const int size = 3;
  const size_t n = 1000;  // several ring chunks
  InProcessKvStore store;
  std::vector<std::vector<float>> data(size, std::vector<float>(n));
  for (int r = 0; r < size; ++r)
    for (size_t i = 0; i < n; ++i) data[r][i] = 0.1f * (r + 1) + 0.001f * i;
  // Two rounds, each summed in rank order: ((x0 + x1) + x2).
  std::vector<float> want(n);
  for (size_t i = 0; i < n; ++i) {
    const float once = (data[0][i] + data[1][i]) + data[2][i];
    want[i] = (once + once) + once;
  }
  std::vector<absl::Status> results(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      GlooOptions options;
      options.prefix = "job-1";
      auto reducer = GlooAllReducer::Connect(&store, r, size, options);
      if (!reducer.ok()) {
        results[r] = reducer.status();
        return;
      }
      // Two rounds: the context is reused.
      results[r] = (*reducer)->AllReduceSum(data[r].data(), n);
      if (results[r].ok()) results[r] = (*reducer)->AllReduceSum(data[r].data(), n);
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) ASSERT_TRUE(results[r].ok()) << results[r];
  EXPECT_EQ(data[0], want);
  // Same bits on every rank.
  EXPECT_EQ(data[0], data[1]);
  EXPECT_EQ(data[0], data[2]);
}

TEST(GlooAllReducer, MissingPeerIsAnErrorNotAHang) {
  InProcessKvStore store;
  GlooOptions options;
  options.timeout = absl::Milliseconds(300);
  auto reducer = GlooAllReducer::Connect(&store, 0, 2, options);  // rank 1 never comes
  ASSERT_FALSE(reducer.ok());
  EXPECT_EQ(reducer.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(reducer.status().message().find("keys still missing"), std::string::npos)
      << reducer.status();
}

TEST(InProcessKvStore, GetWaitsForEveryKeyAndNamesTheMissingOnes) {
  InProcessKvStore store;
  ASSERT_TRUE(store.Set("a", "1").ok());
  std::thread setter([&] { ASSERT_TRUE(store.Set("b", "2").ok()); });
  auto values = store.Get({"a", "b"}, absl::Seconds(30));
  setter.join();
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<std::string>{"1", "2"}));
  auto missing = store.Get({"a", "zzz"}, absl::Milliseconds(10));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(missing.status().message().find("zzz"), std::string::npos);
}

}  // namespace
}  // namespace herald::worker
