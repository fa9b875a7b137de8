// Exact metrics, and a convergence check: the reference trainer learns the
// generator's hidden teacher well above chance on held-out samples.
#include "worker/eval/evaluator.h"

#include "common/data/generator.h"
#include "common/data/key_batch_conversion.h"
#include "common/testing/job_spec_testing.h"
#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"
#include "worker/reference/reference_trainer.h"

namespace herald::worker {
namespace {

TEST(Evaluator, ExactAucAndLogLossOverEveryMergedPrediction) {
  Evaluator a, b;
  a.Add({0.9f, 0.2f}, {1, 0});
  b.Add({0.4f, 0.6f}, {1, 0});
  a.Merge(b);
  const EvalMetrics m = a.Compute();
  EXPECT_EQ(m.samples, 4u);
  // Positives {0.9, 0.4} vs negatives {0.2, 0.6}: 3 of 4 pairs ordered.
  EXPECT_DOUBLE_EQ(m.auc, 0.75);
  const double want = -(std::log(0.9) + std::log(0.8) + std::log(0.4) + std::log(0.4)) / 4;
  EXPECT_NEAR(m.logloss, want, 1e-6);
  a.Clear();
  EXPECT_EQ(a.Compute().samples, 0u);
}

TEST(ReferenceTrainer, LearnsTheTeacherOnHeldOutData) {
  data::GeneratorOptions gen;
  gen.seed = 5;
  gen.cardinality_scale = 0.001;  // small tables: rows get trained many times
  data::SyntheticGenerator generator(gen);
  data::SampleBlock block(generator.schema());
  generator.Generate(0, 40000, &block);

  proto::JobSpec spec;
  spec.set_seed(3);
  spec.set_num_dense(generator.schema().num_dense);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_model()->add_top_mlp(32);
  spec.mutable_model()->add_top_mlp(16);
  herald::testing::UseAdamAndAdagrad(&spec, 0.003f, 0.05f);
  for (uint32_t t = 0; t < generator.schema().num_sparse; ++t) spec.add_tables()->set_dim(8);
  CpuDevice device;
  auto trainer = ReferenceTrainer::Create(spec, &device);
  ASSERT_TRUE(trainer.ok()) << trainer.status();

  const size_t train = 36000, batch = 256;
  auto evaluate = [&] {
    Evaluator eval;
    for (size_t s = train; s < block.size(); s += 1000) {
      const data::KeyBatch b = data::ToKeyBatch(block, s, std::min(block.size(), s + 1000));
      eval.Add((*trainer)->Predict(b), b.labels);
    }
    return eval.Compute();
  };
  const EvalMetrics before = evaluate();
  for (size_t s = 0; s + batch <= train; s += batch) {
    ASSERT_TRUE((*trainer)->Train(data::ToKeyBatch(block, s, s + batch)).ok());
  }
  const EvalMetrics after = evaluate();
  EXPECT_EQ(after.samples, 4000u);
  // The teacher is learnable: a clear gain over the untrained model.
  EXPECT_GT(after.auc, 0.70) << "before " << before.auc;
  EXPECT_GT(after.auc, before.auc + 0.1);
  EXPECT_LT(after.logloss, before.logloss);
}

}  // namespace
}  // namespace herald::worker
