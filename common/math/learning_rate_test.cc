// Learning-rate schedules: warm-up, then constant, step or cosine decay, as
// the spec describes them, and their refusals naming the field.
#include "common/math/learning_rate.h"

#include <cmath>

#include "common/math/optimizer_spec.h"
#include "gtest/gtest.h"

namespace herald::math {
namespace {

TEST(LearningRate, WarmsUpLinearlyThenHoldsTheRate) {
  LearningRateSchedule s;
  s.warmup_iterations = 4;
  EXPECT_EQ(LearningRateAt(0.1f, s, 0), static_cast<float>(0.1f * 1.0 / 4));
  EXPECT_EQ(LearningRateAt(0.1f, s, 2), static_cast<float>(0.1f * 3.0 / 4));
  EXPECT_EQ(LearningRateAt(0.1f, s, 3), 0.1f);
  EXPECT_EQ(LearningRateAt(0.1f, s, 1000), 0.1f);
  EXPECT_EQ(LearningRateAt(0.1f, LearningRateSchedule{}, 7), 0.1f);  // none: constant
}

TEST(LearningRate, StepDecayCountsFromTheEndOfWarmUp) {
  LearningRateSchedule s;
  s.warmup_iterations = 2;
  s.decay = LearningRateSchedule::Decay::kStep;
  s.step_every = 10;
  s.step_factor = 0.5f;
  EXPECT_EQ(LearningRateAt(0.1f, s, 2), 0.1f);
  EXPECT_EQ(LearningRateAt(0.1f, s, 11), 0.1f);
  EXPECT_EQ(LearningRateAt(0.1f, s, 12), static_cast<float>(double(0.1f) * 0.5));
  EXPECT_EQ(LearningRateAt(0.1f, s, 22), static_cast<float>(double(0.1f) * 0.25));
  EXPECT_EQ(LearningRateAt(0.1f, s, 32), static_cast<float>(double(0.1f) * 0.125));
}

TEST(LearningRate, CosineDecayEndsAtTheMinimumAndStaysThere) {
  LearningRateSchedule s;
  s.decay = LearningRateSchedule::Decay::kCosine;
  s.decay_iterations = 100;
  s.min_factor = 0.1f;
  EXPECT_EQ(LearningRateAt(1.0f, s, 0), 1.0f);
  EXPECT_NEAR(LearningRateAt(1.0f, s, 50), 0.1 + 0.9 * 0.5, 1e-7);
  EXPECT_NEAR(LearningRateAt(1.0f, s, 100), 0.1, 1e-7);
  EXPECT_EQ(LearningRateAt(1.0f, s, 100), LearningRateAt(1.0f, s, 5000));
}

TEST(LearningRate, TheOptimizerAtAnIterationCarriesItsRate) {
  SparseOptimizerConfig c;
  c.learning_rate = 0.2f;
  c.schedule.warmup_iterations = 2;
  EXPECT_EQ(AtIteration(c, 0).learning_rate, 0.1f);
  EXPECT_EQ(AtIteration(c, 5).learning_rate, 0.2f);
}

TEST(LearningRate, SpecsThatCannotScheduleAreRefusedNamingTheField) {
  proto::OptimizerSpec spec;
  spec.set_kind(proto::OPTIMIZER_SGD);
  spec.set_learning_rate(0.1f);
  spec.mutable_schedule()->set_decay(proto::DECAY_STEP);
  auto s = SparseOptimizerFromSpec(spec, "sparse_optimizer");
  EXPECT_NE(s.status().message().find("sparse_optimizer.schedule.step_every: must be > 0"),
            std::string::npos)
      << s.status();
  spec.mutable_schedule()->set_step_every(5);
  spec.mutable_schedule()->set_step_factor(2);
  EXPECT_NE(SparseOptimizerFromSpec(spec, "sparse_optimizer")
                .status()
                .message()
                .find("schedule.step_factor: must be in (0, 1]"),
            std::string::npos);
  spec.mutable_schedule()->set_decay(proto::DECAY_COSINE);
  EXPECT_NE(SparseOptimizerFromSpec(spec, "dense_optimizer")
                .status()
                .message()
                .find("dense_optimizer.schedule.decay_iterations: must be > 0"),
            std::string::npos);
  spec.mutable_schedule()->set_decay_iterations(10);
  spec.mutable_schedule()->set_min_factor(0.5f);
  EXPECT_TRUE(SparseOptimizerFromSpec(spec, "dense_optimizer").ok());
  spec.set_weight_decay(0.01f);
  EXPECT_TRUE(SparseOptimizerFromSpec(spec, "dense_optimizer").ok());
  EXPECT_NE(SparseOptimizerFromSpec(spec, "tables[1].optimizer")
                .status()
                .message()
                .find("tables[1].optimizer.weight_decay: applies to dense_optimizer only"),
            std::string::npos);
}

}  // namespace
}  // namespace herald::math
