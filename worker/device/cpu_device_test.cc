#include "worker/device/cpu_device.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/device_array.h"
#include "worker/device/device_event.h"
#include "worker/device/host_buffer.h"

namespace herald::worker {
namespace {

// Naive row-major reference: C = alpha op(A) op(B) + beta C.
std::vector<float> NaiveGemm(bool ta, bool tb, int m, int n, int k, float alpha,
                             const std::vector<float>& a, const std::vector<float>& b, float beta,
                             std::vector<float> c) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) {
        const float av = ta ? a[p * m + i] : a[i * k + p];
        const float bv = tb ? b[j * k + p] : b[p * n + j];
        s += double(av) * bv;
      }
      c[i * n + j] = float(alpha * s + beta * c[i * n + j]);
    }
  }
  return c;
}

TEST(CpuDevice, CopiesOutAtOnceAndItsEventsTimeTheWorkBetweenThem) {
  CpuDevice device;
  const size_t n = size_t{1} << 22;
  DeviceArray<float> a(&device, n);
  HostBuffer<float> out(&device);
  out.Reserve(n, 0);
  DeviceEvent start(&device), end(&device);
  start.Record();
  device.Fill(a.data(), n, 3.0f);
  device.CopyToHostBuffer(a.data(), out.data(), n * sizeof(float));
  // Operations run on the calling thread: the bytes are there, every
  // event is done, before anything is waited for.
  EXPECT_EQ(out.data()[0], 3.0f);
  EXPECT_EQ(out.data()[n - 1], 3.0f);
  end.Record();
  EXPECT_TRUE(end.Done());
  end.Wait();
  // The fill and the copy of 16 MiB took some time, and it is the events'.
  EXPECT_GT(end.MillisSince(start), 0.0);
  EXPECT_LT(start.MillisSince(end), 0.0);
}

TEST(CpuDevice, GemmMatchesNaiveProductForEveryTransposition) {
  CpuDevice dev;
  const int m = 5, n = 7, k = 3;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.25f * i - 1.0f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f - 0.125f * i;
  for (size_t i = 0; i < c.size(); ++i) c[i] = float(i % 3);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      std::vector<float> got = c;
      dev.Gemm(ta, tb, m, n, k, 1.5f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.5f, got.data(),
               n);
      std::vector<float> want = NaiveGemm(ta, tb, m, n, k, 1.5f, a, b, 0.5f, c);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-5f) << "ta=" << ta << " tb=" << tb << " i=" << i;
      }
    }
  }
}

TEST(CpuDevice, ElementwiseAndReductions) {
  CpuDevice dev;
  DeviceArray<float> x(&dev, 6);
  for (float v : x.ToHost()) EXPECT_EQ(v, 0.0f);  // zero-initialised
  const std::vector<float> host = {-1, 2, -3, 4, 0, 6};
  x.CopyFromHost(host);
  std::vector<float> y(6), dx(6), sum(3);
  dev.Relu(x.data(), 6, y.data());
  EXPECT_EQ(y, (std::vector<float>{0, 2, 0, 4, 0, 6}));
  const std::vector<float> dy = {1, 1, 1, 1, 1, 1};
  dev.ReluBackward(y.data(), dy.data(), 6, dx.data());
  EXPECT_EQ(dx, (std::vector<float>{0, 1, 0, 1, 0, 1}));
  dev.SumRows(x.data(), 2, 3, sum.data());  // rows {-1,2,-3} and {4,0,6}
  EXPECT_EQ(sum, (std::vector<float>{3, 2, 3}));
  const float bias[3] = {10, 20, 30};
  dev.AddRowVector(bias, 2, 3, x.data());
  dev.Axpy(6, 2.0f, host.data(), x.data());
  EXPECT_EQ(x.ToHost(), (std::vector<float>{7, 26, 21, 22, 20, 48}));
}

// The order every device sums rows in: blocks of kSumRowsBlock rows, then
// the blocks. Values chosen so that the plain ascending order rounds
// differently.
TEST(CpuDevice, SumRowsAddsBlocksOfRowsThenTheBlocks) {
  CpuDevice dev;
  const int rows = 2 * Device::kSumRowsBlock + 7;
  std::vector<float> x(rows, 1.0f);
  x[0] = 1e8f;
  x[Device::kSumRowsBlock] = -1e8f;
  float blocked = 0.0f, plain = 0.0f;
  for (int first = 0; first < rows; first += Device::kSumRowsBlock) {
    float block = 0.0f;
    for (int r = first; r < std::min(rows, first + Device::kSumRowsBlock); ++r) block += x[r];
    blocked += block;
  }
  for (float v : x) plain += v;
  ASSERT_NE(blocked, plain);
  float out = 7.0f;
  dev.SumRows(x.data(), rows, 1, &out);
  EXPECT_EQ(out, blocked);
}

TEST(CpuDevice, StridedCopyAddMultiplyAndRowDots) {
  CpuDevice dev;
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};  // 2×3
  std::vector<float> wide(2 * 5, 0.0f);
  dev.Copy2D(a.data(), 3, 2, 3, wide.data() + 1, 5);
  EXPECT_EQ(wide, (std::vector<float>{0, 1, 2, 3, 0, 0, 4, 5, 6, 0}));
  dev.Add2D(a.data(), 3, 2, 2, wide.data(), 5);
  EXPECT_EQ(wide, (std::vector<float>{1, 3, 2, 3, 0, 4, 9, 5, 6, 0}));
  std::vector<float> prod(6, 1.0f), dots(2);
  dev.Multiply2D(a.data(), 3, a.data(), 3, 2, 3, prod.data(), 3, /*accumulate=*/true);
  EXPECT_EQ(prod, (std::vector<float>{2, 5, 10, 17, 26, 37}));
  dev.RowDots(a.data(), 3, a.data(), 3, 2, 3, dots.data());
  EXPECT_EQ(dots, (std::vector<float>{14, 77}));
  const float s[2] = {2, -1};
  std::vector<float> y(6, 0.0f);
  dev.AddScaledRows(s, a.data(), 3, 2, 3, y.data(), 3);
  EXPECT_EQ(y, (std::vector<float>{2, 4, 6, -4, -5, -6}));
}

// Dropout masks: 0 or 1 / (1 − p), about a fraction p dropped, the same
// draw for the same (key, iteration, sample), whichever row the sample is
// in; another iteration or key draws another mask.
TEST(CpuDevice, DropoutMasksFollowTheSampleNotTheRow) {
  CpuDevice dev;
  const int rows = 200, width = 30;
  const float p = 0.25f;
  auto mask = [&](uint64_t key, uint64_t iteration, const uint32_t* samples, int n) {
    std::vector<float> m(n * width);
    dev.DropoutMask(key, iteration, samples, n, width, p, m.data());
    return m;
  };
  const std::vector<float> all = mask(7, 3, nullptr, rows);
  size_t dropped = 0;
  for (float v : all) {
    ASSERT_TRUE(v == 0.0f || v == 1.0f / (1.0f - p)) << v;
    dropped += v == 0.0f;
  }
  EXPECT_NEAR(double(dropped) / all.size(), p, 0.03);
  // Samples 150 and 4 as rows 0 and 1 of a worker's batch.
  const std::vector<uint32_t> mine = {150, 4};
  const std::vector<float> part = mask(7, 3, mine.data(), 2);
  EXPECT_EQ(std::vector<float>(part.begin(), part.begin() + width),
            std::vector<float>(all.begin() + 150 * width, all.begin() + 151 * width));
  EXPECT_EQ(std::vector<float>(part.begin() + width, part.end()),
            std::vector<float>(all.begin() + 4 * width, all.begin() + 5 * width));
  EXPECT_NE(mask(7, 4, nullptr, rows), all);
  EXPECT_NE(mask(8, 3, nullptr, rows), all);
  EXPECT_EQ(mask(7, 3, nullptr, rows), all);
}

TEST(CpuDevice, SigmoidCrossEntropyIsStableForLargeLogits) {
  CpuDevice dev;
  const float logits[3] = {0.0f, 100.0f, -100.0f};
  const float labels[3] = {1.0f, 1.0f, 1.0f};
  float loss[3], grad[3];
  dev.SigmoidCrossEntropy(logits, labels, 3, 0.5f, loss, grad);
  EXPECT_NEAR(loss[0], std::log(2.0f), 1e-6);
  EXPECT_NEAR(loss[1], 0.0f, 1e-6);
  EXPECT_NEAR(loss[2], 100.0f, 1e-4);  // no inf from exp(100)
  EXPECT_NEAR(grad[0], -0.25f, 1e-6);
  EXPECT_NEAR(grad[2], -0.5f, 1e-6);
}

TEST(CpuDevice, EmbeddingBagPoolsSlotsWithAStrideAndScattersGradientsInOrder) {
  CpuDevice dev;
  // 3 slots of stride 4 (2 values + 2 optimizer-state floats).
  const std::vector<float> rows = {1, 2, 90, 91, 3, 4, 92, 93, 5, 6, 94, 95};
  // Bags: {2, 0}, {}, {2, 1, 2}.
  const uint32_t offsets[4] = {0, 2, 2, 5};
  const uint32_t slots[5] = {2, 0, 2, 1, 2};
  std::vector<float> sum(6), mean(6);
  dev.EmbeddingBagForward(rows.data(), 4, offsets, slots, nullptr, 3, 2, Pooling::kSum, sum.data(),
                          2);
  EXPECT_EQ(sum, (std::vector<float>{6, 8, 0, 0, 13, 16}));
  dev.EmbeddingBagForward(rows.data(), 4, offsets, slots, nullptr, 3, 2, Pooling::kMean,
                          mean.data(), 2);
  EXPECT_FLOAT_EQ(mean[0], 3.0f);
  EXPECT_FLOAT_EQ(mean[5], 16.0f / 3.0f);
  // sqrt-n: the sum ÷ √(bag size), exactly as the scale is computed.
  std::vector<float> sqrt_n(6);
  dev.EmbeddingBagForward(rows.data(), 4, offsets, slots, nullptr, 3, 2, Pooling::kSqrtN,
                          sqrt_n.data(), 2);
  EXPECT_EQ(sqrt_n[0], 6.0f * (1.0f / std::sqrt(2.0f)));
  EXPECT_EQ(sqrt_n[2], 0.0f);
  EXPECT_EQ(sqrt_n[5], 16.0f * (1.0f / std::sqrt(3.0f)));
  std::vector<float> sqrt_grads(3 * 2, 0.0f);
  const std::vector<float> ones = {1, 1, 1, 1, 1, 1};
  dev.EmbeddingBagBackward(ones.data(), 2, offsets, slots, nullptr, 3, 2, Pooling::kSqrtN,
                           sqrt_grads.data(), 2);
  EXPECT_EQ(sqrt_grads[0], 1.0f / std::sqrt(2.0f));  // slot 0: once, in bag 0
  EXPECT_EQ(sqrt_grads[2], 1.0f / std::sqrt(3.0f));  // slot 1: once, in bag 2
  const std::vector<float> dout = {1, 1, 7, 7, 3, 6};
  std::vector<float> grads(3 * 2, 0.0f);
  dev.EmbeddingBagBackward(dout.data(), 2, offsets, slots, nullptr, 3, 2, Pooling::kMean,
                           grads.data(), 2);
  // Slot 2: 1/2 from bag 0, 2·(1/3)·{3,6} from bag 2; slot 1: (1/3)·{3,6}.
  EXPECT_FLOAT_EQ(grads[4], 0.5f + 2.0f);
  EXPECT_FLOAT_EQ(grads[5], 0.5f + 4.0f);
  EXPECT_FLOAT_EQ(grads[2], 1.0f);
  EXPECT_FLOAT_EQ(grads[0], 0.5f);
  // Weighted: Σ w · row, then the scale; backward (dout · scale) · w.
  const float weights[5] = {0.5f, 2.0f, -1.0f, 4.0f, 0.25f};
  std::vector<float> weighted(6);
  dev.EmbeddingBagForward(rows.data(), 4, offsets, slots, weights, 3, 2, Pooling::kSum,
                          weighted.data(), 2);
  EXPECT_EQ(weighted,
            (std::vector<float>{0.5f * 5 + 2.0f * 1, 0.5f * 6 + 2.0f * 2, 0, 0,
                                -5.0f + 4.0f * 3 + 0.25f * 5, -6.0f + 4.0f * 4 + 0.25f * 6}));
  dev.EmbeddingBagForward(rows.data(), 4, offsets, slots, weights, 3, 2, Pooling::kMean,
                          weighted.data(), 2);
  EXPECT_EQ(weighted[0], (0.5f * 5 + 2.0f * 1) * (1.0f / 2.0f));
  std::vector<float> weighted_grads(3 * 2, 0.0f);
  dev.EmbeddingBagBackward(dout.data(), 2, offsets, slots, weights, 3, 2, Pooling::kMean,
                           weighted_grads.data(), 2);
  const float third = 1.0f / 3.0f;
  EXPECT_EQ(weighted_grads[0], 1.0f * 0.5f * 2.0f);                       // slot 0, bag 0
  EXPECT_EQ(weighted_grads[2], 3.0f * third * 4.0f);                      // slot 1, bag 2
  EXPECT_EQ(weighted_grads[4], 1.0f * 0.5f * 0.5f + 3.0f * third * -1.0f  // slot 2
                                   + 3.0f * third * 0.25f);
  std::vector<float> gathered(2 * 4);
  const uint32_t pick[2] = {1, 2};
  dev.GatherRows(rows.data(), 4, pick, 2, 4, gathered.data());
  EXPECT_EQ(gathered, (std::vector<float>{3, 4, 92, 93, 5, 6, 94, 95}));
  std::vector<float> target(12, 0.0f);
  dev.ScatterRows(gathered.data(), pick, 2, 4, 4, target.data());
  EXPECT_EQ(target, (std::vector<float>{0, 0, 0, 0, 3, 4, 92, 93, 5, 6, 94, 95}));
  dev.ZeroRows(pick, 1, 2, 4, target.data());
  EXPECT_EQ(target[4], 0.0f);
  EXPECT_EQ(target[6], 92.0f);
}

TEST(CpuDevice, RowUpdatesEqualTheSharedOptimizerMath) {
  CpuDevice dev;
  math::SparseOptimizerConfig adagrad{math::SparseOptimizerKind::kAdagrad, 0.1f};
  // 2 slots, dim 2, row = 2 values + 2 accumulators; gradient stride 2.
  std::vector<float> rows = {1, 2, 0, 0, 3, 4, 0, 0};
  const std::vector<float> grads = {0.5f, -1, 2, 0.25f};
  const uint32_t slots[1] = {1};
  dev.ApplyRowUpdates(adagrad, 2, slots, 1, grads.data(), 2, rows.data(), 4);
  std::vector<float> want = {3, 4, 0, 0};
  math::ApplySparseUpdate(adagrad, 2, grads.data() + 2, want.data(), want.data() + 2);
  EXPECT_EQ(std::vector<float>(rows.begin() + 4, rows.end()), want);
  EXPECT_EQ(rows[0], 1.0f);  // slot 0 untouched
}

}  // namespace
}  // namespace herald::worker
