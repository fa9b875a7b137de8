// Whole-model checks: finite-difference gradients of every model w.r.t. its
// dense parameters and the embedding rows it reads, deterministic
// initialisation, and field-level spec errors.
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"
#include "worker/model/dense_optimizer.h"
#include "worker/model/gradient_check.h"
#include "worker/model/model_factory.h"
#include "worker/model/model_gradient_check.h"

namespace herald::worker {
namespace {

using testing::TestValues;

constexpr int kDim = 4;

proto::JobSpec Spec(proto::ModelKind kind) {
  proto::JobSpec spec;
  spec.set_seed(42);
  spec.set_num_dense(3);
  spec.mutable_model()->set_kind(kind);
  spec.mutable_model()->add_top_mlp(6);
  spec.mutable_model()->add_top_mlp(5);
  spec.mutable_model()->add_bottom_mlp(5);
  spec.mutable_model()->add_bottom_mlp(kDim);
  spec.mutable_model()->set_cross_layers(2);
  for (int t = 0; t < 3; ++t) {
    auto* table = spec.add_tables();
    table->set_dim(kDim);
    table->set_pooling(t == 2 ? proto::POOLING_MEAN : proto::POOLING_SUM);
  }
  return spec;
}

class ModelGradients : public ::testing::TestWithParam<proto::ModelKind> {};

TEST_P(ModelGradients, MatchFiniteDifferences) {
  CpuDevice dev;
  auto model = CreateModel(Spec(GetParam()), &dev);
  ASSERT_TRUE(model.ok()) << model.status();
  testing::TestBatch batch({kDim, kDim, kDim}, 3);
  testing::ExpectModelGradientsMatch(model->get(), &batch, 200);
}

INSTANTIATE_TEST_SUITE_P(AllModels, ModelGradients,
                         ::testing::Values(proto::MODEL_WIDE_AND_DEEP, proto::MODEL_DEEPFM,
                                           proto::MODEL_DCN, proto::MODEL_NCF, proto::MODEL_DLRM),
                         [](const auto& info) { return proto::ModelKind_Name(info.param); });

TEST(ModelFactory, SameSeedSameBitsOtherSeedOtherValues) {
  CpuDevice dev;
  proto::JobSpec spec = Spec(proto::MODEL_DLRM);
  auto a = CreateModel(spec, &dev);
  auto b = CreateModel(spec, &dev);
  spec.set_seed(43);
  auto c = CreateModel(spec, &dev);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ((*a)->params().values().ToHost(), (*b)->params().values().ToHost());
  EXPECT_NE((*a)->params().values().ToHost(), (*c)->params().values().ToHost());
}

TEST(ModelFactory, RejectsShapesTheModelsCannotTakeNamingTheField) {
  CpuDevice dev;
  auto expect_error = [&](proto::JobSpec spec, const std::string& field) {
    auto model = CreateModel(spec, &dev);
    ASSERT_FALSE(model.ok()) << field;
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(model.status().message().find(field), std::string::npos) << model.status();
  };
  proto::JobSpec spec = Spec(proto::MODEL_DLRM);
  spec.mutable_model()->set_bottom_mlp(1, 8);
  expect_error(spec, "model.bottom_mlp: last width 8 must equal the embedding dim 4");
  spec = Spec(proto::MODEL_DEEPFM);
  spec.mutable_tables(2)->set_dim(8);
  expect_error(spec, "tables[2].dim");
  spec = Spec(proto::MODEL_NCF);
  spec.mutable_tables()->DeleteSubrange(1, 2);
  expect_error(spec, "tables: NCF needs");
  spec = Spec(proto::MODEL_DCN);
  spec.mutable_model()->set_cross_layers(0);
  expect_error(spec, "model.cross_layers");
  spec = Spec(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_model()->set_top_mlp(0, 0);
  expect_error(spec, "model.top_mlp[0]");
  spec = Spec(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_model()->set_kind(proto::MODEL_KIND_UNSPECIFIED);
  expect_error(spec, "model.kind");
  spec = Spec(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_tables(0)->set_dim(0);
  expect_error(spec, "tables[0].dim");
}

TEST(DenseOptimizer, StepEqualsTheSharedMathOnTheFlatVector) {
  CpuDevice dev;
  auto model = CreateModel(Spec(proto::MODEL_WIDE_AND_DEEP), &dev);
  ASSERT_TRUE(model.ok());
  DenseParameters& params = (*model)->params();
  proto::OptimizerSpec spec;
  spec.set_kind(proto::OPTIMIZER_ADAM);
  spec.set_learning_rate(0.01f);
  auto opt = DenseOptimizer::Create(spec, &dev, params.size());
  ASSERT_TRUE(opt.ok()) << opt.status();
  const std::vector<float> g = TestValues(params.size(), 50);
  params.grads().CopyFromHost(g);
  std::vector<float> want = params.values().ToHost();
  std::vector<float> state = opt->state().ToHost();
  math::ApplySparseUpdate(opt->config(), params.size(), g.data(), want.data(), state.data());
  opt->Step(params, 0);
  EXPECT_EQ(params.values().ToHost(), want);

  spec.set_kind(proto::OPTIMIZER_ROWWISE_ADAGRAD);
  auto rowwise = DenseOptimizer::Create(spec, &dev, params.size());
  ASSERT_FALSE(rowwise.ok());
  EXPECT_NE(rowwise.status().message().find("dense_optimizer.kind"), std::string::npos);
  spec.set_kind(proto::OPTIMIZER_SGD);
  spec.set_learning_rate(-1);
  auto negative = DenseOptimizer::Create(spec, &dev, params.size());
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("dense_optimizer.learning_rate"), std::string::npos)
      << negative.status();
}

// A warm-up schedule and weight decay: the step at iteration t is the shared
// math at t's rate on the gradient plus weight_decay · values.
TEST(DenseOptimizer, FollowsTheScheduleAndDecaysWeights) {
  CpuDevice dev;
  auto model = CreateModel(Spec(proto::MODEL_WIDE_AND_DEEP), &dev);
  ASSERT_TRUE(model.ok());
  DenseParameters& params = (*model)->params();
  proto::OptimizerSpec spec;
  spec.set_kind(proto::OPTIMIZER_ADAM);
  spec.set_learning_rate(0.01f);
  spec.set_weight_decay(0.1f);
  spec.mutable_schedule()->set_warmup_iterations(4);
  auto opt = DenseOptimizer::Create(spec, &dev, params.size());
  ASSERT_TRUE(opt.ok()) << opt.status();
  const std::vector<float> g = TestValues(params.size(), 51);
  std::vector<float> want = params.values().ToHost();
  std::vector<float> state = opt->state().ToHost();
  std::vector<float> decayed = g;
  for (size_t i = 0; i < g.size(); ++i) decayed[i] = g[i] + 0.1f * want[i];
  math::SparseOptimizerConfig config = opt->config();
  config.learning_rate = 0.01f * 2 / 4;  // iteration 1 of a 4-iteration warm-up
  math::ApplySparseUpdate(config, params.size(), decayed.data(), want.data(), state.data());
  params.grads().CopyFromHost(g);
  opt->Step(params, 1);
  EXPECT_EQ(params.values().ToHost(), want);

  spec.set_weight_decay(-1);
  EXPECT_NE(DenseOptimizer::Create(spec, &dev, params.size())
                .status()
                .message()
                .find("dense_optimizer.weight_decay: must be a finite number >= 0"),
            std::string::npos);
}

}  // namespace
}  // namespace herald::worker
