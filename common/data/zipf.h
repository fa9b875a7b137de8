#pragma once
// Zipf distribution over ranks {1..n}: P(k) ∝ k^-exponent. Rejection-inversion
// sampling (Hörmann & Derflinger, 1996): O(1) per draw for any n, exponent > 0.

#include <cstdint>

#include "common/rng.h"

namespace herald::data {

// Immutable after construction; thread-safe.
class ZipfDistribution {
 public:
  // REQUIRES: n >= 1, exponent > 0.
  ZipfDistribution(uint64_t n, double exponent);
  // A rank in [1, n]; 1 is the most frequent.
  uint64_t Sample(CounterRng& rng) const;
  uint64_t n() const { return n_; }
  double exponent() const { return exponent_; }

 private:
  double H(double x) const;
  double HIntegral(double x) const;
  double HIntegralInverse(double x) const;

  uint64_t n_;
  double exponent_;
  double h_integral_x1_;
  double h_integral_n_;
  double s_;
};

}  // namespace herald::data
