#include "common/math/sparse_optimizer.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace herald::math {
namespace {

struct Row {
  std::vector<float> w, state;
};

Row Start(const SparseOptimizerConfig& c, std::vector<float> w) {
  Row r{std::move(w), {}};
  r.state.resize(StateFloats(c.kind, r.w.size()));
  InitOptimizerState(c, r.w.size(), r.state.data());
  return r;
}

void Step(const SparseOptimizerConfig& c, Row* r, std::vector<float> g) {
  ApplySparseUpdate(c, r->w.size(), g.data(), r->w.data(), r->state.data());
}

TEST(SparseOptimizer, StateSizes) {
  EXPECT_EQ(StateFloats(SparseOptimizerKind::kSgd, 8), 0u);
  EXPECT_EQ(StateFloats(SparseOptimizerKind::kAdagrad, 8), 8u);
  EXPECT_EQ(StateFloats(SparseOptimizerKind::kRowwiseAdagrad, 8), 1u);
  EXPECT_EQ(StateFloats(SparseOptimizerKind::kAdam, 8), 17u);
  EXPECT_EQ(RowFloats(SparseOptimizerKind::kAdam, 8), 25u);
}

TEST(SparseOptimizer, SgdHandComputed) {
  SparseOptimizerConfig c{SparseOptimizerKind::kSgd, 0.5f};
  Row r = Start(c, {1.0f, -2.0f});
  Step(c, &r, {0.2f, -0.4f});
  EXPECT_FLOAT_EQ(r.w[0], 0.9f);
  EXPECT_FLOAT_EQ(r.w[1], -1.8f);
}

TEST(SparseOptimizer, AdagradHandComputedTwoSteps) {
  SparseOptimizerConfig c{SparseOptimizerKind::kAdagrad, 0.1f, 0.0f};
  c.initial_accumulator = 1.0f;
  Row r = Start(c, {1.0f, 1.0f});
  Step(c, &r, {3.0f, 0.0f});
  // acc = 1 + 9 = 10; w = 1 - 0.1 * 3 / sqrt(10)
  EXPECT_FLOAT_EQ(r.state[0], 10.0f);
  EXPECT_FLOAT_EQ(r.w[0], 1.0f - 0.3f / std::sqrt(10.0f));
  EXPECT_FLOAT_EQ(r.w[1], 1.0f);
  float w0 = r.w[0];
  Step(c, &r, {1.0f, 2.0f});
  // acc = 11; w -= 0.1 / sqrt(11). acc1 = 1 + 4 = 5; w1 = 1 - 0.2 / sqrt(5)
  EXPECT_FLOAT_EQ(r.w[0], w0 - 0.1f / std::sqrt(11.0f));
  EXPECT_FLOAT_EQ(r.w[1], 1.0f - 0.2f / std::sqrt(5.0f));
}

TEST(SparseOptimizer, RowwiseAdagradUsesMeanSquare) {
  SparseOptimizerConfig c{SparseOptimizerKind::kRowwiseAdagrad, 1.0f, 0.0f};
  Row r = Start(c, {0.0f, 0.0f});
  Step(c, &r, {3.0f, 4.0f});
  // acc = (9 + 16) / 2 = 12.5; w = -g / sqrt(12.5)
  EXPECT_FLOAT_EQ(r.state[0], 12.5f);
  EXPECT_FLOAT_EQ(r.w[0], -3.0f / std::sqrt(12.5f));
  EXPECT_FLOAT_EQ(r.w[1], -4.0f / std::sqrt(12.5f));
}

TEST(SparseOptimizer, AdamFirstStepMovesByLearningRateAndCountsSteps) {
  SparseOptimizerConfig c{SparseOptimizerKind::kAdam, 0.01f, 0.0f, 0.9f, 0.999f};
  Row r = Start(c, {1.0f, 1.0f});
  Step(c, &r, {0.5f, -2.0f});
  // Bias correction makes m̂ = g, v̂ = g², so w moves by exactly lr·sign(g).
  EXPECT_NEAR(r.w[0], 0.99f, 1e-6f);
  EXPECT_NEAR(r.w[1], 1.01f, 1e-6f);
  EXPECT_FLOAT_EQ(r.state[0], 0.05f);                      // m = 0.1·g
  EXPECT_EQ(r.state[2], (1.0f - 0.999f) * (0.5f * 0.5f));  // v = (1-β2)·g², in float
  Step(c, &r, {0.5f, -2.0f});
  uint32_t step;
  std::memcpy(&step, &r.state[4], sizeof(step));
  EXPECT_EQ(step, 2u);
  // Second step with the same gradient: m̂ = g, v̂ = g² again.
  EXPECT_NEAR(r.w[0], 0.98f, 1e-6f);
}

TEST(SparseOptimizer, PowerOfIsCloseToPowAndExactForSmallExponents) {
  EXPECT_EQ(PowerOf(0.9f, 0), 1.0f);
  EXPECT_EQ(PowerOf(0.9f, 1), 0.9f);
  EXPECT_EQ(PowerOf(0.5f, 10), 1.0f / 1024.0f);  // exact powers of two stay exact
  for (uint32_t e : {2u, 7u, 100u, 1000u, 123457u}) {
    for (float b : {0.9f, 0.999f}) {
      const double want = std::pow(static_cast<double>(b), e);
      EXPECT_NEAR(PowerOf(b, e), want, 1e-6 * want + 1e-45) << b << "^" << e;
    }
  }
}

TEST(SparseOptimizer, ZeroGradientOnANewRowChangesNothingAndNeverNaN) {
  // A row that was touched (e.g. all its samples had zero loss gradient) must
  // stay finite even with epsilon 0 under the default initial accumulator.
  for (auto kind : {SparseOptimizerKind::kSgd, SparseOptimizerKind::kAdagrad,
                    SparseOptimizerKind::kRowwiseAdagrad, SparseOptimizerKind::kAdam}) {
    SparseOptimizerConfig c{kind, 0.05f};
    Row r = Start(c, {0.3f, -0.7f, 0.11f});
    Step(c, &r, {0.0f, 0.0f, 0.0f});
    EXPECT_EQ(r.w, (std::vector<float>{0.3f, -0.7f, 0.11f})) << static_cast<int>(kind);
  }
}

}  // namespace
}  // namespace herald::math
