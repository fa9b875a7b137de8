#include "common/data/zipf.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace herald::data {
namespace {

TEST(ZipfDistribution, FrequenciesMatchTheory) {
  for (double exponent : {0.8, 1.0, 1.2}) {
    const uint64_t n = 1000;
    ZipfDistribution zipf(n, exponent);
    double norm = 0;
    for (uint64_t k = 1; k <= n; ++k) norm += std::pow(k, -exponent);
    CounterRng rng(5, 6, static_cast<uint64_t>(exponent * 100));
    std::vector<int> counts(n + 1, 0);
    const int draws = 300000;
    for (int i = 0; i < draws; ++i) {
      uint64_t k = zipf.Sample(rng);
      ASSERT_GE(k, 1u);
      ASSERT_LE(k, n);
      counts[k]++;
    }
    for (uint64_t k : {1, 2, 10}) {
      double expected = draws * std::pow(k, -exponent) / norm;
      EXPECT_NEAR(counts[k], expected, 5 * std::sqrt(expected) + 0.01 * expected)
          << "exponent " << exponent << " rank " << k;
    }
  }
}

TEST(ZipfDistribution, SingleElementAlwaysOne) {
  ZipfDistribution zipf(1, 1.1);
  CounterRng rng(1, 1, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(zipf.Sample(rng), 1u);
}

TEST(ZipfDistribution, HugeSupportStaysInRange) {
  ZipfDistribution zipf(10131227, 1.05);
  CounterRng rng(2, 2, 2);
  uint64_t max_seen = 0;
  for (int i = 0; i < 100000; ++i) {
    uint64_t k = zipf.Sample(rng);
    ASSERT_LE(k, 10131227u);
    max_seen = std::max(max_seen, k);
  }
  EXPECT_GT(max_seen, 100000u);  // the tail is reached
}

}  // namespace
}  // namespace herald::data
