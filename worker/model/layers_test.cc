// Finite-difference gradient checks of every layer: the objective is
// L = Σ r ⊙ output for fixed random r, so ∂L/∂output = r.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"
#include "worker/model/concat.h"
#include "worker/model/cross_layer.h"
#include "worker/model/cross_v2_layer.h"
#include "worker/model/dot_interaction.h"
#include "worker/model/embedding_bag.h"
#include "worker/model/fm_interaction.h"
#include "worker/model/gradient_check.h"
#include "worker/model/head_loss.h"
#include "worker/model/linear.h"
#include "worker/model/mlp.h"
#include "worker/model/relu.h"

namespace herald::worker {
namespace {

using testing::ExpectGradientMatches;
using testing::TestValues;

double Weighted(const float* y, const std::vector<float>& r) {
  double s = 0;
  for (size_t i = 0; i < r.size(); ++i) s += double(r[i]) * y[i];
  return s;
}

std::vector<float> Slice(const float* p, size_t n) { return std::vector<float>(p, p + n); }

TEST(LayerGradients, Linear) {
  CpuDevice dev;
  DenseParameters params(&dev);
  const int rows = 3, in = 4, out = 5, stride = 6;  // x is a column block of a wider matrix
  Linear layer(&dev, &params, in, out);
  params.Initialize(7);
  std::vector<float> x = TestValues(rows * stride, 1);
  const std::vector<float> r = TestValues(rows * out, 2);
  auto loss = [&] { return Weighted(layer.Forward(x.data(), stride, rows), r); };
  loss();
  std::copy(r.begin(), r.end(), layer.output_grad());
  std::vector<float> dx(rows * stride, 0.0f);
  layer.Backward(dx.data(), stride);
  const std::vector<float> grads = Slice(params.grad(0), params.size());
  ExpectGradientMatches(loss, x.data(), dx, "dx");
  ExpectGradientMatches(loss, params.value(0), grads, "dparams");
}

TEST(LayerGradients, Relu) {
  CpuDevice dev;
  Relu layer(&dev, 4);
  std::vector<float> x = TestValues(12, 3, 1.0f, 0.05f);
  const std::vector<float> r = TestValues(12, 4);
  auto loss = [&] { return Weighted(layer.Forward(x.data(), 3), r); };
  loss();
  std::copy(r.begin(), r.end(), layer.output_grad());
  std::vector<float> dx(12, 0.0f);
  layer.Backward(dx.data());
  ExpectGradientMatches(loss, x.data(), dx, "dx");
}

TEST(LayerGradients, MlpOfLinearAndRelu) {
  CpuDevice dev;
  DenseParameters params(&dev);
  Mlp mlp(&dev, &params, 5, {6, 3}, /*relu_after_last=*/false);
  params.Initialize(11);
  std::vector<float> x = TestValues(4 * 5, 5);
  const std::vector<float> r = TestValues(4 * 3, 6);
  auto loss = [&] { return Weighted(mlp.Forward(x.data(), 5, 4), r); };
  loss();
  std::copy(r.begin(), r.end(), mlp.output_grad());
  std::vector<float> dx(20, 0.0f);
  mlp.Backward(dx.data(), 5);
  const std::vector<float> grads = Slice(params.grad(0), params.size());
  ExpectGradientMatches(loss, x.data(), dx, "dx");
  ExpectGradientMatches(loss, params.value(0), grads, "dparams");
}

TEST(LayerGradients, SigmoidBinaryCrossEntropy) {
  CpuDevice dev;
  HeadLoss bce(&dev, LossKind::kBinaryCrossEntropy);
  std::vector<float> logits = {-3.0f, -0.2f, 0.0f, 0.7f, 4.0f};
  const std::vector<float> labels = {0, 1, 1, 0, 1};
  const float scale = 0.25f;
  auto loss = [&] {
    bce.Forward(logits.data(), labels.data(), 5, scale);
    return scale * bce.TakeLoss();
  };
  // Loss value against the definition −y·log p − (1−y)·log(1−p).
  double want = 0;
  for (int i = 0; i < 5; ++i) {
    const double p = 1 / (1 + std::exp(-double(logits[i])));
    want += -labels[i] * std::log(p) - (1 - labels[i]) * std::log(1 - p);
  }
  EXPECT_NEAR(loss(), scale * want, 1e-6);
  std::vector<float> dlogits(5, 0.0f);
  bce.Backward(dlogits.data());
  ExpectGradientMatches(loss, logits.data(), dlogits, "dlogits");
}

TEST(LayerGradients, SquaredErrorOfARegressionLabel) {
  CpuDevice dev;
  HeadLoss mse(&dev, LossKind::kSquaredError);
  std::vector<float> outputs = {-3.0f, -0.2f, 0.0f, 0.7f, 4.0f};
  const std::vector<float> labels = {2.5f, -1, 0, 0.7f, 10};
  const float scale = 0.25f;
  auto loss = [&] {
    mse.Forward(outputs.data(), labels.data(), 5, scale);
    return scale * mse.TakeLoss();
  };
  double want = 0;
  for (int i = 0; i < 5; ++i) want += (outputs[i] - labels[i]) * (outputs[i] - labels[i]);
  EXPECT_NEAR(loss(), scale * want, 1e-5);
  std::vector<float> doutputs(5, 0.0f);
  mse.Backward(doutputs.data());
  ExpectGradientMatches(loss, outputs.data(), doutputs, "doutputs");
  // A regression model predicts its outputs themselves.
  std::vector<float> predicted(5);
  mse.Predict(outputs.data(), 5, predicted.data());
  EXPECT_EQ(predicted, outputs);
}

TEST(LayerGradients, FmInteraction) {
  CpuDevice dev;
  const int rows = 3, fields = 4, dim = 3, stride = fields * dim + 2;
  FmInteraction fm(&dev, fields, dim);
  std::vector<float> x = TestValues(rows * stride, 8);
  const std::vector<float> r = TestValues(rows, 9);
  auto loss = [&] { return Weighted(fm.Forward(x.data(), stride, rows), r); };
  // Forward against the pairwise definition Σ_{f<g} <x_f, x_g>.
  const float* y = fm.Forward(x.data(), stride, rows);
  for (int i = 0; i < rows; ++i) {
    double pairs = 0;
    for (int f = 0; f < fields; ++f)
      for (int g = f + 1; g < fields; ++g)
        for (int k = 0; k < dim; ++k)
          pairs += double(x[i * stride + f * dim + k]) * x[i * stride + g * dim + k];
    EXPECT_NEAR(y[i], pairs, 1e-5);
  }
  std::copy(r.begin(), r.end(), fm.output_grad());
  std::vector<float> dx(rows * stride, 0.0f);
  fm.Backward(dx.data(), stride);
  ExpectGradientMatches(loss, x.data(), dx, "dx");
}

TEST(LayerGradients, CrossLayerWithSeparateAndSharedInputs) {
  CpuDevice dev;
  DenseParameters params(&dev);
  const int rows = 3, width = 5;
  CrossLayer first(&dev, &params, width);
  CrossLayer second(&dev, &params, width);
  params.Initialize(13);
  std::vector<float> x0 = TestValues(rows * width, 10);
  const std::vector<float> r = TestValues(rows * width, 11);
  // Two stacked layers: the first sees (x0, x0), the second (x0, x1).
  auto loss = [&] {
    const float* x1 = first.Forward(x0.data(), width, x0.data(), width, rows);
    return Weighted(second.Forward(x0.data(), width, x1, width, rows), r);
  };
  loss();
  std::copy(r.begin(), r.end(), second.output_grad());
  std::vector<float> dx0(rows * width, 0.0f);
  second.Backward(dx0.data(), width, first.output_grad(), width);
  first.Backward(dx0.data(), width, dx0.data(), width);
  const std::vector<float> grads = Slice(params.grad(0), params.size());
  ExpectGradientMatches(loss, x0.data(), dx0, "dx0");
  ExpectGradientMatches(loss, params.value(0), grads, "dparams");
}

// DCN-v2, full rank and rank 2, stacked as in a cross network: the first
// layer sees (x0, x0), the second (x0, x1).
class CrossV2Gradients : public ::testing::TestWithParam<int> {};

TEST_P(CrossV2Gradients, MatchFiniteDifferences) {
  CpuDevice dev;
  DenseParameters params(&dev);
  const int rows = 3, width = 5, stride = 7, rank = GetParam();
  CrossV2Layer first(&dev, &params, width, rank);
  CrossV2Layer second(&dev, &params, width, rank);
  params.Initialize(17);
  EXPECT_EQ(params.size(),
            size_t(2 * (rank > 0 ? 2 * width * rank + width : width * width + width)));
  std::vector<float> x0 = TestValues(rows * stride, 18);  // a column block of a wider matrix
  const std::vector<float> r = TestValues(rows * width, 19);
  auto loss = [&] {
    const float* x1 = first.Forward(x0.data(), stride, x0.data(), stride, rows);
    return Weighted(second.Forward(x0.data(), stride, x1, width, rows), r);
  };
  // y = x0 ⊙ (x·W + b) + x, from the parameters as laid out (W, b or V, U, b).
  const float* y1 = first.Forward(x0.data(), stride, x0.data(), stride, rows);
  for (int row = 0; row < rows; ++row) {
    for (int c = 0; c < width; ++c) {
      double u = 0;  // + b, zero-initialised
      const float* x = x0.data() + row * stride;
      if (rank == 0) {
        for (int k = 0; k < width; ++k) u += double(x[k]) * params.value(0)[k * width + c];
      } else {
        for (int j = 0; j < rank; ++j) {
          double t = 0;
          for (int k = 0; k < width; ++k) t += double(x[k]) * params.value(0)[k * rank + j];
          u += t * params.value(width * rank)[j * width + c];
        }
      }
      EXPECT_NEAR(y1[row * width + c], x[c] * u + x[c], 1e-5) << row << "," << c;
    }
  }
  loss();
  std::copy(r.begin(), r.end(), second.output_grad());
  std::vector<float> dx0(rows * stride, 0.0f);
  second.Backward(dx0.data(), stride, first.output_grad(), width);
  first.Backward(dx0.data(), stride, dx0.data(), stride);
  const std::vector<float> grads = Slice(params.grad(0), params.size());
  ExpectGradientMatches(loss, x0.data(), dx0, "dx0");
  ExpectGradientMatches(loss, params.value(0), grads, "dparams");
}

INSTANTIATE_TEST_SUITE_P(FullAndLowRank, CrossV2Gradients, ::testing::Values(0, 2));

TEST(LayerGradients, DotInteraction) {
  CpuDevice dev;
  const int rows = 2, fields = 4, dim = 3;
  DotInteraction dot(&dev, fields, dim);
  ASSERT_EQ(dot.out(), 6);
  std::vector<float> x = TestValues(rows * fields * dim, 12);
  const std::vector<float> r = TestValues(rows * dot.out(), 13);
  auto loss = [&] { return Weighted(dot.Forward(x.data(), fields * dim, rows), r); };
  // Pair (2, 1) of row 1 is output 2 (order (1,0), (2,0), (2,1), …).
  const float* y = dot.Forward(x.data(), fields * dim, rows);
  double want = 0;
  for (int k = 0; k < dim; ++k) want += double(x[12 + 2 * dim + k]) * x[12 + 1 * dim + k];
  EXPECT_NEAR(y[6 + 2], want, 1e-6);
  std::copy(r.begin(), r.end(), dot.output_grad());
  std::vector<float> dx(x.size(), 0.0f);
  dot.Backward(dx.data(), fields * dim);
  ExpectGradientMatches(loss, x.data(), dx, "dx");
}

TEST(LayerGradients, Concat) {
  CpuDevice dev;
  const int rows = 3;
  Concat concat(&dev, {2, 3});
  std::vector<float> a = TestValues(rows * 4, 14);  // 2 columns of a stride-4 matrix
  std::vector<float> b = TestValues(rows * 3, 15);
  const std::vector<float> r = TestValues(rows * 5, 16);
  auto loss = [&] { return Weighted(concat.Forward({{a.data(), 4}, {b.data(), 3}}, rows), r); };
  loss();
  EXPECT_EQ(concat.output()[5 + 1], a[4 + 1]);
  EXPECT_EQ(concat.output()[5 + 2], b[3]);
  std::copy(r.begin(), r.end(), concat.output_grad());
  std::vector<float> da(a.size(), 0.0f), db(b.size(), 0.0f);
  concat.Backward({{da.data(), 4}, {db.data(), 3}});
  ExpectGradientMatches(loss, a.data(), da, "da");
  ExpectGradientMatches(loss, b.data(), db, "db");
  EXPECT_EQ(da[2], 0.0f);  // columns outside the block get nothing
}

TEST(LayerGradients, EmbeddingBagSumMeanAndSqrtNOverRepeatedSlotsWithAndWithoutWeights) {
  CpuDevice dev;
  const int dim = 3, row_stride = 5, slots_total = 4, rows = 3;
  // Multi-hot bags {0, 2, 2}, {}, {3, 0}.
  const std::vector<uint32_t> offsets = {0, 3, 3, 5};
  const std::vector<uint32_t> slots = {0, 2, 2, 3, 0};
  const std::vector<float> weights = {0.5f, -1.5f, 2.0f, 0.75f, 3.0f};
  for (bool weighted : {false, true})
    for (Pooling pooling : {Pooling::kSum, Pooling::kMean, Pooling::kSqrtN}) {
      EmbeddingBag bag(&dev, dim, pooling);
      std::vector<float> cache = TestValues(slots_total * row_stride, 17);
      std::vector<float> grads(slots_total * dim, 0.0f);
      EmbeddingBagInput in{offsets.data(), slots.data(), cache.data(), row_stride, grads.data()};
      if (weighted) in.weights = weights.data();
      const std::vector<float> r = TestValues(rows * dim, 18);
      std::vector<float> out(rows * dim);
      auto loss = [&] {
        bag.Forward(in, rows, out.data(), dim);
        return Weighted(out.data(), r);
      };
      loss();
      for (int d = 0; d < dim; ++d) EXPECT_EQ(out[dim + d], 0.0f);  // empty bag
      bag.Backward(in, rows, r.data(), dim);
      // Analytic gradient w.r.t. the whole slot array (state floats get 0).
      std::vector<float> analytic(cache.size(), 0.0f);
      for (int s = 0; s < slots_total; ++s)
        for (int d = 0; d < dim; ++d) analytic[s * row_stride + d] = grads[s * dim + d];
      ExpectGradientMatches(loss, cache.data(), analytic,
                            "bag pooling " + std::to_string(static_cast<int>(pooling)) +
                                (weighted ? " weighted" : ""));
      EXPECT_EQ(grads[1 * dim], 0.0f);  // slot 1 is in no bag
    }
}

}  // namespace
}  // namespace herald::worker
