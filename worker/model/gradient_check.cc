#include "worker/model/gradient_check.h"

#include <algorithm>
#include <cmath>

#include "common/rng.h"
#include "gtest/gtest.h"

namespace herald::worker::testing {

void ExpectGradientMatches(const std::function<double()>& loss, float* values,
                           const std::vector<float>& analytic, const std::string& what,
                           const GradientCheckOptions& options) {
  const size_t n = analytic.size();
  const size_t step = std::max<size_t>(1, n / options.max_coordinates);
  for (size_t i = 0; i < n; i += step) {
    const float original = values[i];
    values[i] = static_cast<float>(original + options.epsilon);
    const double plus = loss();
    values[i] = static_cast<float>(original - options.epsilon);
    const double minus = loss();
    values[i] = original;
    const double numeric = (plus - minus) / (2 * options.epsilon);
    const double tolerance =
        options.abs_tolerance +
        options.rel_tolerance * std::max(std::fabs(numeric), std::fabs(double(analytic[i])));
    EXPECT_NEAR(analytic[i], numeric, tolerance) << what << "[" << i << "]";
  }
}

std::vector<float> TestValues(size_t n, uint64_t seed, float scale, float gap) {
  CounterRng rng(seed, 0x7e57, 0);
  std::vector<float> out(n);
  for (float& v : out) {
    const float u = 2.0f * rng.NextFloat() - 1.0f;
    v = u * scale;
    if (std::fabs(v) < gap) v = v < 0 ? -gap : gap;
  }
  return out;
}

}  // namespace herald::worker::testing
