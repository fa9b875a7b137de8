#include "common/cuda/saxpy.h"

#include <cmath>

#include "gtest/gtest.h"

namespace herald::cuda {
namespace {

TEST(SaxpyOnDevice, MatchesCpu) {
  std::string why;
  if (DeviceCount(&why) == 0) GTEST_SKIP() << "SKIPPED (no GPU): " << why;
  std::vector<float> x(100000), y(100000), expect(100000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::sin(i * 0.1f);
    y[i] = std::cos(i * 0.3f);
    expect[i] = 2.5f * x[i] + y[i];
  }
  ASSERT_EQ(SaxpyOnDevice(2.5f, x, &y), "");
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_FALSE(std::isnan(y[i]));
    ASSERT_NEAR(y[i], expect[i], 1e-6f * (1 + std::abs(expect[i])));
  }
}

}  // namespace
}  // namespace herald::cuda
