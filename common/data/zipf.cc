#include "common/data/zipf.h"

#include <algorithm>
#include <cmath>

namespace herald::data {
namespace {
// log1p(x)/x, accurate near 0.
double Helper1(double x) {
  return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
// expm1(x)/x, accurate near 0.
double Helper2(double x) {
  return std::abs(x) > 1e-8 ? std::expm1(x) / x
                            : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}
}  // namespace

ZipfDistribution::ZipfDistribution(uint64_t n, double exponent) : n_(n), exponent_(exponent) {
  h_integral_x1_ = HIntegral(1.5) - 1.0;
  h_integral_n_ = HIntegral(static_cast<double>(n) + 0.5);
  s_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
}

double ZipfDistribution::H(double x) const { return std::exp(-exponent_ * std::log(x)); }

double ZipfDistribution::HIntegral(double x) const {
  double log_x = std::log(x);
  return Helper2((1.0 - exponent_) * log_x) * log_x;
}

double ZipfDistribution::HIntegralInverse(double x) const {
  double t = x * (1.0 - exponent_);
  if (t < -1.0) t = -1.0;
  return std::exp(Helper1(t) * x);
}

uint64_t ZipfDistribution::Sample(CounterRng& rng) const {
  while (true) {
    double u = h_integral_n_ + rng.NextDouble() * (h_integral_x1_ - h_integral_n_);
    double x = HIntegralInverse(u);
    double kd = std::floor(x + 0.5);
    if (kd < 1.0) kd = 1.0;
    if (kd > static_cast<double>(n_)) kd = static_cast<double>(n_);
    uint64_t k = static_cast<uint64_t>(kd);
    if (kd - x <= s_ || u >= HIntegral(kd + 0.5) - H(kd)) return k;
  }
}

}  // namespace herald::data
