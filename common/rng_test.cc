#include "common/rng.h"

#include <cmath>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(Philox, MatchesPublishedKnownAnswer) {
  // Known-answer vectors of Random123 (kat_vectors, philox4x32 10 rounds).
  PhiloxCounter zero = Philox4x32({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(zero, (PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  PhiloxCounter ones =
      Philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu});
  EXPECT_EQ(ones, (PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  PhiloxCounter pi =
      Philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u});
  EXPECT_EQ(pi, (PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(InitEmbeddingRow, SameInputsSameRowDifferentKeysDifferentRows) {
  std::vector<float> a(19), b(19), c(19), d(19);
  InitEmbeddingRow(42, 3, 123456789, 0.1f, a.data(), a.size());
  InitEmbeddingRow(42, 3, 123456789, 0.1f, b.data(), b.size());
  InitEmbeddingRow(42, 3, 123456790, 0.1f, c.data(), c.size());
  InitEmbeddingRow(42, 4, 123456789, 0.1f, d.data(), d.size());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  for (float v : a) {
    EXPECT_GE(v, -0.1f);
    EXPECT_LT(v, 0.1f);
  }
}

TEST(InitEmbeddingRow, PrefixIndependentOfDimension) {
  // A row's first values do not depend on its dimension (documented property
  // that lets the CUDA initializer compute values independently).
  std::vector<float> a(8), b(16);
  InitEmbeddingRow(7, 1, 99, 1.0f, a.data(), a.size());
  InitEmbeddingRow(7, 1, 99, 1.0f, b.data(), b.size());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a[i], b[i]);
}

// The definition: block i (floats 4i .. 4i+3) is Philox4x32 of counter (i,
// table, key lo, key hi) under the seed, each word mapped to [-scale,
// scale). InitEmbeddingRow computes several blocks at once: the same bits,
// for every dimension (whole groups of 16 blocks, the 8/4/2/1 tails, a
// last block cut short).
TEST(InitEmbeddingRow, EveryBlockIsPhiloxOfItsCounter) {
  const uint64_t seed = 0x0123456789abcdefull;
  for (size_t dim : {1, 3, 4, 5, 8, 31, 32, 63, 64, 65, 100, 128, 257}) {
    std::vector<float> row(dim);
    for (uint64_t k = 0; k < 50; ++k) {
      const uint64_t key = k * 0x9E3779B97F4A7C15ull;
      const uint32_t table = static_cast<uint32_t>(k % 7);
      InitEmbeddingRow(seed, table, key, 0.3f, row.data(), dim);
      for (size_t i = 0; i < dim; ++i) {
        const PhiloxCounter words =
            Philox4x32({static_cast<uint32_t>(i / 4), table, static_cast<uint32_t>(key),
                        static_cast<uint32_t>(key >> 32)},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
        const float want = (2.0f * UniformFloat(words[i % 4]) - 1.0f) * 0.3f;
        ASSERT_EQ(row[i], want) << "dim " << dim << " key " << key << " float " << i;
      }
    }
  }
}

TEST(CounterRng, UniformMomentsAndBounds) {
  CounterRng rng(1, 2, 3);
  double sum = 0, sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double u = rng.NextDouble();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sum_sq / n - (sum / n) * (sum / n), 1.0 / 12, 0.002);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(rng.NextBelow(7), 7u);
}

TEST(CounterRng, StreamsDiffer) {
  CounterRng a(1, 2, 3), b(1, 2, 4), c(1, 3, 3), d(2, 2, 3);
  std::set<uint64_t> first{a.Next64(), b.Next64(), c.Next64(), d.Next64()};
  EXPECT_EQ(first.size(), 4u);
}

TEST(CounterRng, GaussianMoments) {
  CounterRng rng(9, 9, 9);
  double sum = 0, sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double g = rng.NextGaussian();
    sum += g;
    sum_sq += g * g;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.02);
}

}  // namespace
}  // namespace herald
