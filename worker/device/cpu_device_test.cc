#include "worker/device/cpu_device.h"

#include <vector>

#include "gtest/gtest.h"

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
      dev.Gemm(ta, tb, m, n, k, 1.5f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.5f,
               got.data(), n);
      std::vector<float> want = NaiveGemm(ta, tb, m, n, k, 1.5f, a, b, 0.5f, c);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[i], 1e-5f) << "ta=" << ta << " tb=" << tb << " i=" << i;
      }
    }
  }
}

TEST(CpuDevice, ElementwiseAndReductions) {
  CpuDevice dev;
  float* x = dev.Allocate(6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(x[i], 0.0f);  // zero-initialised
  const std::vector<float> host = {-1, 2, -3, 4, 0, 6};
  dev.CopyToDevice(host.data(), x, 6);
  std::vector<float> y(6), dx(6), sum(3), back(6);
  dev.Relu(x, 6, y.data());
  EXPECT_EQ(y, (std::vector<float>{0, 2, 0, 4, 0, 6}));
  const std::vector<float> dy = {1, 1, 1, 1, 1, 1};
  dev.ReluBackward(x, dy.data(), 6, dx.data());
  EXPECT_EQ(dx, (std::vector<float>{0, 1, 0, 1, 0, 1}));
  dev.SumRows(x, 2, 3, sum.data());  // rows {-1,2,-3} and {4,0,6}
  EXPECT_EQ(sum, (std::vector<float>{3, 2, 3}));
  const float bias[3] = {10, 20, 30};
  dev.AddRowVector(bias, 2, 3, x);
  dev.Axpy(6, 2.0f, host.data(), x);
  dev.CopyToHost(x, back.data(), 6);
  EXPECT_EQ(back, (std::vector<float>{7, 26, 21, 22, 20, 48}));
  dev.Free(x);
}

TEST(CpuDevice, GatherAndScatterAddUseSlotsWithAStride) {
  CpuDevice dev;
  // 3 slots of stride 4 (2 values + 2 optimizer-state floats).
  std::vector<float> rows = {1, 2, 90, 91, 3, 4, 92, 93, 5, 6, 94, 95};
  const int32_t slots[4] = {2, 0, 2, 1};
  std::vector<float> out(8);
  dev.GatherRows(rows.data(), 4, slots, 4, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{5, 6, 1, 2, 5, 6, 3, 4}));
  const std::vector<float> grads = {1, 1, 2, 2, 3, 3, 4, 4};
  dev.ScatterAddRows(grads.data(), slots, 4, 2, 4, rows.data());
  // Slot 2 received 1 and 3; the state floats are untouched.
  EXPECT_EQ(rows, (std::vector<float>{3, 4, 90, 91, 7, 8, 92, 93, 9, 10, 94, 95}));
}

}  // namespace
}  // namespace herald::worker
