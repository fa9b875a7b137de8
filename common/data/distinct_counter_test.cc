#include "common/data/distinct_counter.h"

#include <cmath>
#include <cstdio>
#include <random>

#include "gtest/gtest.h"

namespace herald::data {
namespace {

TEST(DistinctCounter, ExactUpToTheLimitWhateverTheRepeats) {
  DistinctCounter counter(/*exact_limit=*/1000);
  for (int round = 0; round < 3; ++round) {
    for (Key k = 0; k < 1000; ++k) counter.Add(k * 7919);
  }
  EXPECT_TRUE(counter.exact());
  EXPECT_EQ(counter.Estimate(), 1000u);
}

// Beyond the limit: within 4 standard errors (1.04 / sqrt(2^14) = 0.81%)
// of the truth for several sizes, repeats not counted twice, the same
// answer for the same keys in another order.
TEST(DistinctCounter, EstimatesLargeStreamsWithinTheStatedError) {
  for (uint64_t n : {70000ull, 300000ull, 2000000ull}) {
    DistinctCounter counter(/*exact_limit=*/65536, /*precision=*/14);
    DistinctCounter reversed(/*exact_limit=*/65536, /*precision=*/14);
    std::mt19937_64 rng(n);
    const uint64_t base = rng();
    for (uint64_t i = 0; i < n; ++i) {
      counter.Add(base + i * 0x9E3779B97F4A7C15ull);
      if (i % 3 == 0) counter.Add(base + i * 0x9E3779B97F4A7C15ull);  // a repeat
    }
    for (uint64_t i = n; i > 0; --i) reversed.Add(base + (i - 1) * 0x9E3779B97F4A7C15ull);
    EXPECT_FALSE(counter.exact());
    const double error = std::abs(static_cast<double>(counter.Estimate()) - n) / n;
    std::printf("distinct %llu: estimate %llu, relative error %.4f\n",
                static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(counter.Estimate()), error);
    EXPECT_LT(error, 4 * 1.04 / 128) << n;
    EXPECT_EQ(counter.Estimate(), reversed.Estimate()) << n;
  }
}

// Counters of parts merged equal one counter of the whole, exact or not,
// whichever part crossed the limit; a restored state counts on the same.
TEST(DistinctCounter, MergedPartsCountAsTheWhole) {
  for (uint64_t n : {900ull, 5000ull}) {
    DistinctCounter whole(/*exact_limit=*/1000, /*precision=*/10);
    DistinctCounter a(1000, 10), b(1000, 10), c(1000, 10);
    for (uint64_t i = 0; i < n; ++i) {
      const Key key = i * 0x9E3779B97F4A7C15ull;
      whole.Add(key);
      (i % 7 == 0 ? a : i % 2 == 0 ? b : c).Add(key);
      if (i % 5 == 0) c.Add(key);  // a key in two parts
    }
    DistinctCounter merged(1000, 10);
    merged.Merge(a);
    merged.Merge(b);
    merged.Merge(c);
    EXPECT_EQ(merged.exact(), whole.exact()) << n;
    EXPECT_EQ(merged.Estimate(), whole.Estimate()) << n;
    EXPECT_EQ(merged.registers(), whole.registers()) << n;
    EXPECT_EQ(merged.SortedKeys(), whole.SortedKeys()) << n;
    DistinctCounter restored(1000, 10);
    if (whole.exact()) {
      for (Key k : whole.SortedKeys()) restored.Add(k);
    } else {
      restored = DistinctCounter::FromRegisters(1000, 10, whole.registers());
    }
    EXPECT_EQ(restored.Estimate(), whole.Estimate()) << n;
  }
}

}  // namespace
}  // namespace herald::data
