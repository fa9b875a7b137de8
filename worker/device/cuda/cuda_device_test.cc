// Every CudaDevice operation against CpuDevice on random inputs. Operations
// the device promises bitwise equal are compared exactly; cuBLAS GEMM and
// the transcendental ones within a relative tolerance, the largest relative
// error printed. NaN never passes. Without a GPU every test but the refusal
// ones prints "SKIPPED (no GPU): ..." and skips.

#include "worker/device/cuda/cuda_device.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"
#include "worker/device/device_array.h"
#include "worker/device/device_event.h"
#include "worker/device/host_buffer.h"

namespace herald::worker {
namespace {

std::vector<float> Random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Largest |gpu − cpu| / (1 + |cpu|); fails on NaN, size mismatch or above
// `tolerance` (0: bitwise equal required).
void ExpectClose(const std::string& what, const std::vector<float>& cpu,
                 const std::vector<float>& gpu, double tolerance) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  double worst = 0;
  size_t worst_at = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_FALSE(std::isnan(gpu[i])) << what << ": NaN at " << i;
    ASSERT_FALSE(std::isnan(cpu[i])) << what << ": CPU NaN at " << i;
    const double err = std::fabs(double(gpu[i]) - cpu[i]) / (1.0 + std::fabs(cpu[i]));
    if (err > worst) worst = err, worst_at = i;
  }
  std::printf("%-28s n=%-8zu max relative error %.3g\n", what.c_str(), cpu.size(), worst);
  if (tolerance == 0) {
    for (size_t i = 0; i < cpu.size(); ++i) {
      ASSERT_EQ(cpu[i], gpu[i]) << what << ": not bitwise equal at " << i;
    }
  } else {
    EXPECT_LE(worst, tolerance) << what << " at " << worst_at << ": cpu " << cpu[worst_at]
                                << " gpu " << gpu[worst_at];
  }
}

// One buffer on both devices with the same contents.
template <typename T>
struct Twin {
  DeviceArray<T> cpu, gpu;
  Twin(Device* c, Device* g, const std::vector<T>& host)
      : cpu(c, host.size()), gpu(g, host.size()) {
    cpu.CopyFromHost(host);
    gpu.CopyFromHost(host);
  }
};

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (CudaDeviceCount(&why) == 0) GTEST_SKIP() << "SKIPPED (no GPU): " << why;
    CudaDeviceOptions options;
    options.pinned_staging_bytes = 4096;  // small: every copy takes many chunks
    auto device = CudaDevice::Create(options);
    ASSERT_TRUE(device.ok()) << device.status();
    gpu_ = std::move(*device);
  }
  void TearDown() override {
    if (gpu_ != nullptr) {
      gpu_->Synchronize();
      EXPECT_TRUE(gpu_->status().ok()) << gpu_->status();
    }
  }

  void ExpectBatchedBagsEqualTableByTable(bool four_aligned);
  Twin<float> Floats(const std::vector<float>& v) { return Twin<float>(&cpu_, gpu_.get(), v); }
  Twin<uint32_t> Indices(const std::vector<uint32_t>& v) {
    return Twin<uint32_t>(&cpu_, gpu_.get(), v);
  }
  void Expect(const std::string& what, Twin<float>& t, double tolerance = 0) {
    gpu_->Synchronize();
    ASSERT_TRUE(gpu_->status().ok()) << gpu_->status();
    ExpectClose(what, t.cpu.ToHost(), t.gpu.ToHost(), tolerance);
  }

  CpuDevice cpu_;
  std::unique_ptr<CudaDevice> gpu_;
};

TEST(CudaDeviceRefusal, MissingOrdinalIsRefused) {
  CudaDeviceOptions options;
  options.ordinal = 4096;
  auto device = CudaDevice::Create(options);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(device.status().message().find("cuda:4096 does not exist"), std::string::npos)
      << device.status();
}

TEST_F(CudaDeviceTest, CopiesRoundTripThroughSmallPinnedStaging) {
  const std::vector<float> host = Random(100003, 1);  // 98 staging chunks, odd tail
  DeviceArray<float> a(gpu_.get(), host.size());
  for (float v : a.ToHost()) ASSERT_EQ(v, 0.0f);  // zero-initialised
  a.CopyFromHost(host);
  EXPECT_EQ(a.ToHost(), host);
  // Overlapping device copy has memmove semantics.
  gpu_->CopyOnDevice(a.data(), a.data() + 7, 1000 * sizeof(float));
  std::vector<float> want = host;
  for (size_t i = 0; i < 1000; ++i) want[i + 7] = host[i];
  EXPECT_EQ(a.ToHost(), want);
  gpu_->Fill(a.data(), 5, 2.5f);
  EXPECT_EQ(a.ToHost()[4], 2.5f);
}

// Small copies go through the ring of small slots: more of them than the
// ring has, queued behind work on the stream, each from a host buffer
// reused at once, all arrive (the ring waits for a slot's last transfer
// before it refills it).
TEST_F(CudaDeviceTest, SmallCopiesThroughTheRingArriveWhileTheStreamIsBusy) {
  const int copies = 200, floats = 300;  // 1 200 bytes each
  DeviceArray<float> busy(gpu_.get(), size_t{1} << 22);
  DeviceArray<float> all(gpu_.get(), static_cast<size_t>(copies) * floats);
  std::vector<float> host(floats), want;
  for (int c = 0; c < copies; ++c) {
    gpu_->Fill(busy.data(), busy.size(), static_cast<float>(c));  // work ahead of each copy
    for (int i = 0; i < floats; ++i) host[i] = static_cast<float>(c * floats + i);
    gpu_->CopyToDevice(host.data(), all.data() + static_cast<size_t>(c) * floats,
                       floats * sizeof(float));
    want.insert(want.end(), host.begin(), host.end());
    std::fill(host.begin(), host.end(), -1.0f);  // the caller's buffer may go at once
  }
  EXPECT_EQ(all.ToHost(), want);
}

TEST_F(CudaDeviceTest, GemmMatchesCpuForEveryTranspositionAndStride) {
  const int m = 37, n = 53, k = 29;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Stored with a wider row stride than needed (+3) to test lda/ldb/ldc.
      const int lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 3, ldc = n + 3;
      auto a = Floats(Random((ta ? k : m) * lda, 2));
      auto b = Floats(Random((tb ? n : k) * ldb, 3));
      auto c = Floats(Random(m * ldc, 4));
      cpu_.Gemm(ta, tb, m, n, k, 1.5f, a.cpu.data(), lda, b.cpu.data(), ldb, 0.5f, c.cpu.data(),
                ldc);
      gpu_->Gemm(ta, tb, m, n, k, 1.5f, a.gpu.data(), lda, b.gpu.data(), ldb, 0.5f, c.gpu.data(),
                 ldc);
      Expect("Gemm ta=" + std::to_string(ta) + " tb=" + std::to_string(tb), c, 1e-5);
    }
  }
  auto v = Floats(Random(m, 5));  // n = 1: the CPU's sgemv path
  auto w = Floats(Random(m * k, 6));
  auto x = Floats(Random(k, 7));
  cpu_.Gemm(false, false, m, 1, k, 1.0f, w.cpu.data(), k, x.cpu.data(), 1, 0.0f, v.cpu.data(), 1);
  gpu_->Gemm(false, false, m, 1, k, 1.0f, w.gpu.data(), k, x.gpu.data(), 1, 0.0f, v.gpu.data(), 1);
  Expect("Gemm n=1", v, 1e-5);
  auto z = Floats(Random(m * n, 8));  // k = 0: C = beta·C
  cpu_.Gemm(false, false, m, n, 0, 1.0f, nullptr, 1, nullptr, n, 0.25f, z.cpu.data(), n);
  gpu_->Gemm(false, false, m, n, 0, 1.0f, nullptr, 1, nullptr, n, 0.25f, z.gpu.data(), n);
  Expect("Gemm k=0", z);
}

TEST_F(CudaDeviceTest, DenseAlgebraIsBitwiseEqual) {
  const int rows = 67, cols = 45;
  const auto host = Random(rows * cols, 9);
  auto y = Floats(host);
  auto x = Floats(Random(rows * cols, 10));
  cpu_.Axpy(host.size(), -0.75f, x.cpu.data(), y.cpu.data());
  gpu_->Axpy(host.size(), -0.75f, x.gpu.data(), y.gpu.data());
  Expect("Axpy", y);
  auto bias = Floats(Random(cols, 11));
  cpu_.AddRowVector(bias.cpu.data(), rows, cols, y.cpu.data());
  gpu_->AddRowVector(bias.gpu.data(), rows, cols, y.gpu.data());
  Expect("AddRowVector", y);
  auto sums = Floats(std::vector<float>(cols, 9.0f));
  cpu_.SumRows(y.cpu.data(), rows, cols, sums.cpu.data());
  gpu_->SumRows(y.gpu.data(), rows, cols, sums.gpu.data());
  Expect("SumRows", sums);
  for (int tall_cols : {1, 45}) {  // several blocks of rows
    const int tall_rows = 3 * Device::kSumRowsBlock + 17;
    auto tall = Floats(Random(tall_rows * tall_cols, 13));
    auto tall_sums = Floats(std::vector<float>(tall_cols, 9.0f));
    cpu_.SumRows(tall.cpu.data(), tall_rows, tall_cols, tall_sums.cpu.data());
    gpu_->SumRows(tall.gpu.data(), tall_rows, tall_cols, tall_sums.gpu.data());
    Expect("SumRows (tall)", tall_sums);
  }
  auto wide = Floats(Random(rows * (cols + 10), 12));
  cpu_.Copy2D(x.cpu.data(), cols, rows, cols - 5, wide.cpu.data() + 3, cols + 10);
  gpu_->Copy2D(x.gpu.data(), cols, rows, cols - 5, wide.gpu.data() + 3, cols + 10);
  Expect("Copy2D", wide);
  cpu_.Add2D(y.cpu.data(), cols, rows, cols - 2, wide.cpu.data() + 1, cols + 10);
  gpu_->Add2D(y.gpu.data(), cols, rows, cols - 2, wide.gpu.data() + 1, cols + 10);
  Expect("Add2D", wide);
}

TEST_F(CudaDeviceTest, ElementwiseOperations) {
  const size_t n = 5000;
  auto x = Floats(Random(n, 13, -8.0f, 8.0f));
  auto y = Floats(std::vector<float>(n));
  cpu_.Relu(x.cpu.data(), n, y.cpu.data());
  gpu_->Relu(x.gpu.data(), n, y.gpu.data());
  Expect("Relu", y);
  auto dy = Floats(Random(n, 14));
  auto dx = Floats(Random(n, 15));
  cpu_.ReluBackward(y.cpu.data(), dy.cpu.data(), n, dx.cpu.data());
  gpu_->ReluBackward(y.gpu.data(), dy.gpu.data(), n, dx.gpu.data());
  Expect("ReluBackward", dx);
  cpu_.Sigmoid(x.cpu.data(), n, y.cpu.data());
  gpu_->Sigmoid(x.gpu.data(), n, y.gpu.data());
  Expect("Sigmoid", y, 1e-6);
  // Logits up to ±100: the stable formula must not overflow on either.
  auto logits = Floats(Random(n, 16, -100.0f, 100.0f));
  std::vector<float> label_host(n);
  for (size_t i = 0; i < n; ++i) label_host[i] = float(i % 2);
  auto labels = Floats(label_host);
  auto losses = Floats(std::vector<float>(n));
  auto dlogits = Floats(std::vector<float>(n));
  cpu_.SigmoidCrossEntropy(logits.cpu.data(), labels.cpu.data(), n, 0.125f, losses.cpu.data(),
                           dlogits.cpu.data());
  gpu_->SigmoidCrossEntropy(logits.gpu.data(), labels.gpu.data(), n, 0.125f, losses.gpu.data(),
                            dlogits.gpu.data());
  Expect("SigmoidCrossEntropy loss", losses, 1e-6);
  Expect("SigmoidCrossEntropy grad", dlogits, 1e-6);
  // Regression labels: no transcendental function, so bit for bit.
  auto targets = Floats(Random(n, 19, -5.0f, 5.0f));
  cpu_.SquaredError(logits.cpu.data(), targets.cpu.data(), n, 0.125f, losses.cpu.data(),
                    dlogits.cpu.data());
  gpu_->SquaredError(logits.gpu.data(), targets.gpu.data(), n, 0.125f, losses.gpu.data(),
                     dlogits.gpu.data());
  Expect("SquaredError loss", losses);
  Expect("SquaredError grad", dlogits);

  const int rows = 33, cols = 17, stride = 20;
  auto a = Floats(Random(rows * stride, 17));
  auto b = Floats(Random(rows * stride, 18));
  auto out = Floats(Random(rows * stride, 19));
  for (bool accumulate : {false, true}) {
    cpu_.Multiply2D(a.cpu.data(), stride, b.cpu.data() + 1, stride, rows, cols, out.cpu.data() + 2,
                    stride, accumulate);
    gpu_->Multiply2D(a.gpu.data(), stride, b.gpu.data() + 1, stride, rows, cols, out.gpu.data() + 2,
                     stride, accumulate);
    Expect(accumulate ? "Multiply2D accumulate" : "Multiply2D", out);
  }
  auto s = Floats(Random(rows, 20));
  cpu_.AddScaledRows(s.cpu.data(), a.cpu.data(), stride, rows, cols, out.cpu.data(), stride);
  gpu_->AddScaledRows(s.gpu.data(), a.gpu.data(), stride, rows, cols, out.gpu.data(), stride);
  Expect("AddScaledRows", out);
  auto dots = Floats(std::vector<float>(rows));
  cpu_.RowDots(a.cpu.data(), stride, b.cpu.data(), stride, rows, cols, dots.cpu.data());
  gpu_->RowDots(a.gpu.data(), stride, b.gpu.data(), stride, rows, cols, dots.gpu.data());
  Expect("RowDots", dots);
}

// The same Philox draws on both devices (dropout_rules.h): masks equal bit
// for bit, by sample index and by row, over widths not a multiple of 4.
TEST_F(CudaDeviceTest, DropoutMasksAreBitwiseEqual) {
  const int rows = 37, width = 23;
  auto samples =
      Indices({5,  900, 3,  77, 12, 6,  1,  0,  2,  4,  8,  9,  10, 11, 13, 14, 15, 16, 17,
               18, 19,  20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35});
  for (const uint32_t* cpu_samples : {samples.cpu.data(), static_cast<uint32_t*>(nullptr)}) {
    const uint32_t* gpu_samples = cpu_samples == nullptr ? nullptr : samples.gpu.data();
    auto mask = Floats(std::vector<float>(rows * width, 7.0f));
    cpu_.DropoutMask(0x1234567890ull, 41, cpu_samples, rows, width, 0.3f, mask.cpu.data());
    gpu_->DropoutMask(0x1234567890ull, 41, gpu_samples, rows, width, 0.3f, mask.gpu.data());
    Expect("DropoutMask", mask);
  }
}

TEST_F(CudaDeviceTest, InteractionsAreBitwiseEqual) {
  const int rows = 41, fields = 9, dim = 16, stride = fields * dim + 5;
  auto x = Floats(Random(rows * stride, 21));
  auto fm = Floats(std::vector<float>(rows));
  cpu_.FmForward(x.cpu.data(), stride, rows, fields, dim, fm.cpu.data());
  gpu_->FmForward(x.gpu.data(), stride, rows, fields, dim, fm.gpu.data());
  Expect("FmForward", fm);
  auto dout = Floats(Random(rows, 22));
  auto dx = Floats(Random(rows * stride, 23));
  cpu_.FmBackward(x.cpu.data(), stride, dout.cpu.data(), rows, fields, dim, dx.cpu.data(), stride);
  gpu_->FmBackward(x.gpu.data(), stride, dout.gpu.data(), rows, fields, dim, dx.gpu.data(), stride);
  Expect("FmBackward", dx);
  const int pairs = fields * (fields - 1) / 2, out_stride = pairs + 4;
  auto dots = Floats(Random(rows * out_stride, 24));
  cpu_.DotInteractionForward(x.cpu.data(), stride, rows, fields, dim, dots.cpu.data(), out_stride);
  gpu_->DotInteractionForward(x.gpu.data(), stride, rows, fields, dim, dots.gpu.data(), out_stride);
  Expect("DotInteractionForward", dots);
  auto g = Floats(Random(rows * out_stride, 25));
  cpu_.DotInteractionBackward(x.cpu.data(), stride, g.cpu.data(), out_stride, rows, fields, dim,
                              dx.cpu.data(), stride);
  gpu_->DotInteractionBackward(x.gpu.data(), stride, g.gpu.data(), out_stride, rows, fields, dim,
                               dx.gpu.data(), stride);
  Expect("DotInteractionBackward", dx);
}

// Bags with repeated slots within and across bags and empty bags.
struct Bags {
  std::vector<uint32_t> offsets{0}, slots;
};
Bags RandomBags(int n, uint32_t slot_count, uint32_t seed) {
  std::mt19937 rng(seed);
  Bags b;
  for (int i = 0; i < n; ++i) {
    const int size = static_cast<int>(rng() % 5);  // 0..4
    for (int j = 0; j < size; ++j) b.slots.push_back(rng() % slot_count);
    b.offsets.push_back(static_cast<uint32_t>(b.slots.size()));
  }
  return b;
}

TEST_F(CudaDeviceTest, EmbeddingBagsAreBitwiseEqualAndDeterministic) {
  const int n = 700, dim = 24, row_stride = 2 * dim + 1, slot_count = 97;
  const Bags bags = RandomBags(n, slot_count, 26);
  auto offsets = Indices(bags.offsets);
  auto slots = Indices(bags.slots);
  auto rows = Floats(Random(slot_count * row_stride, 27));
  auto weights = Floats(Random(bags.slots.size(), 31));
  for (bool weighted : {false, true})
    for (Pooling mean : {Pooling::kSum, Pooling::kMean, Pooling::kSqrtN}) {
      const std::string tag =
          " pooling " + std::to_string(static_cast<int>(mean)) + (weighted ? " weighted" : "");
      const float* cpu_weights = weighted ? weights.cpu.data() : nullptr;
      const float* gpu_weights = weighted ? weights.gpu.data() : nullptr;
      auto out = Floats(Random(n * (dim + 3), 28));
      cpu_.EmbeddingBagForward(rows.cpu.data(), row_stride, offsets.cpu.data(), slots.cpu.data(),
                               cpu_weights, n, dim, mean, out.cpu.data(), dim + 3);
      gpu_->EmbeddingBagForward(rows.gpu.data(), row_stride, offsets.gpu.data(), slots.gpu.data(),
                                gpu_weights, n, dim, mean, out.gpu.data(), dim + 3);
      Expect("EmbeddingBagForward" + tag, out);
      auto dout = Floats(Random(n * (dim + 3), 29));
      const auto start = Random(slot_count * dim, 30);
      auto grads = Floats(start);
      cpu_.EmbeddingBagBackward(dout.cpu.data(), dim + 3, offsets.cpu.data(), slots.cpu.data(),
                                cpu_weights, n, dim, mean, grads.cpu.data(), dim);
      gpu_->EmbeddingBagBackward(dout.gpu.data(), dim + 3, offsets.gpu.data(), slots.gpu.data(),
                                 gpu_weights, n, dim, mean, grads.gpu.data(), dim);
      Expect("EmbeddingBagBackward" + tag, grads);
      // The same inputs again give the same bits.
      const std::vector<float> first = grads.gpu.ToHost();
      grads.gpu.CopyFromHost(start);
      gpu_->EmbeddingBagBackward(dout.gpu.data(), dim + 3, offsets.gpu.data(), slots.gpu.data(),
                                 gpu_weights, n, dim, mean, grads.gpu.data(), dim);
      EXPECT_EQ(grads.gpu.ToHost(), first) << "backward twice differs" << tag;
    }
}

// Every table at once: tables of different dims, pooling, sizes (one
// with no entries) and weights (every other table) in one feature matrix, fused on the GPU, table
// by table on the CPU. four_aligned: every dim, stride and column a
// multiple of 4 floats (the kernels' 16-byte accesses), else odd ones.
void CudaDeviceTest::ExpectBatchedBagsEqualTableByTable(bool four_aligned) {
  const int n = 517;
  struct Table {
    int dim, slot_count, max_bag;
    Pooling mean;
  };
  const int odd = four_aligned ? 0 : 1;
  const std::vector<Table> shapes = {
      {8, 61, 4, Pooling::kSum},    {24, 97, 5, Pooling::kMean}, {4 - odd, 5, 3, Pooling::kSqrtN},
      {16, 1000, 1, Pooling::kSum}, {8, 40, 0, Pooling::kMean},  {32 + odd, 7, 6, Pooling::kSqrtN}};
  const int pad = four_aligned ? 4 : 2;  // floats after the last table's columns
  int width = four_aligned ? 8 : 5;      // a few columns before the first table's
  std::vector<Bags> bags;
  std::vector<Twin<uint32_t>> offsets, slots;
  std::vector<Twin<float>> rows, grads, weights;
  std::vector<int> columns;
  for (size_t t = 0; t < shapes.size(); ++t) {
    Bags b;
    std::mt19937 rng(40 + t);
    for (int i = 0; i < n; ++i) {
      const int size =
          shapes[t].max_bag == 0 ? 0 : static_cast<int>(rng() % (shapes[t].max_bag + 1));
      for (int j = 0; j < size; ++j) b.slots.push_back(rng() % shapes[t].slot_count);
      b.offsets.push_back(static_cast<uint32_t>(b.slots.size()));
    }
    offsets.push_back(Indices(b.offsets));
    slots.push_back(Indices(b.slots));
    weights.push_back(Floats(Random(b.slots.size(), 80 + t)));
    const int stride = 2 * shapes[t].dim + odd;
    rows.push_back(Floats(Random(shapes[t].slot_count * stride, 50 + t)));
    grads.push_back(Floats(Random(shapes[t].slot_count * shapes[t].dim, 60 + t)));
    columns.push_back(width);
    width += shapes[t].dim;
    bags.push_back(std::move(b));
  }
  auto tables_on = [&](bool gpu) {
    std::vector<Device::BagTable> tables;
    for (size_t t = 0; t < shapes.size(); ++t) {
      Device::BagTable b;
      b.rows = gpu ? rows[t].gpu.data() : rows[t].cpu.data();
      b.row_stride = 2 * shapes[t].dim + odd;
      b.offsets = gpu ? offsets[t].gpu.data() : offsets[t].cpu.data();
      b.slots = gpu ? slots[t].gpu.data() : slots[t].cpu.data();
      if (t % 2 == 1) b.weights = gpu ? weights[t].gpu.data() : weights[t].cpu.data();
      b.entries = static_cast<uint32_t>(bags[t].slots.size());
      b.capacity = static_cast<uint32_t>(shapes[t].slot_count);
      b.dim = shapes[t].dim;
      b.pooling = shapes[t].mean;
      b.grads = gpu ? grads[t].gpu.data() : grads[t].cpu.data();
      b.column = columns[t];
      tables.push_back(b);
    }
    return tables;
  };
  auto out = Floats(Random(n * (width + pad), 70));
  EXPECT_EQ(CudaDevice::FourFloatsAtOnce(tables_on(true), out.gpu.data(), width + pad, false),
            four_aligned);
  cpu_.EmbeddingBagsForward(tables_on(false), n, out.cpu.data(), width + pad);
  gpu_->EmbeddingBagsForward(tables_on(true), n, out.gpu.data(), width + pad);
  Expect("EmbeddingBagsForward", out);
  auto dout = Floats(Random(n * (width + pad), 71));
  for (int round = 0; round < 2; ++round) {  // twice: the same bits again
    cpu_.EmbeddingBagsBackward(tables_on(false), n, dout.cpu.data(), width + pad);
    gpu_->EmbeddingBagsBackward(tables_on(true), n, dout.gpu.data(), width + pad);
    for (size_t t = 0; t < shapes.size(); ++t) {
      Expect("EmbeddingBagsBackward table " + std::to_string(t), grads[t]);
    }
  }
  // Capacity unknown: the GPU goes table by table, with the same result.
  std::vector<Device::BagTable> unknown = tables_on(true);
  for (Device::BagTable& b : unknown) b.capacity = 0;
  cpu_.EmbeddingBagsBackward(tables_on(false), n, dout.cpu.data(), width + pad);
  gpu_->EmbeddingBagsBackward(unknown, n, dout.gpu.data(), width + pad);
  for (size_t t = 0; t < shapes.size(); ++t) {
    Expect("EmbeddingBagsBackward (table by table) " + std::to_string(t), grads[t]);
  }
}

TEST_F(CudaDeviceTest, BatchedEmbeddingBagsEqualTheTableByTableOnes) {
  ExpectBatchedBagsEqualTableByTable(/*four_aligned=*/false);
}

TEST_F(CudaDeviceTest, BatchedEmbeddingBagsOfFourFloatMultiplesEqualTheTableByTableOnes) {
  ExpectBatchedBagsEqualTableByTable(/*four_aligned=*/true);
}

TEST_F(CudaDeviceTest, HostBufferCopiesWithoutStaging) {
  const std::vector<float> host = Random(100003, 80);
  HostBuffer<float> buffer(gpu_.get());
  buffer.Reserve(host.size(), 0);
  std::copy(host.begin(), host.end(), buffer.data());
  DeviceArray<float> a(gpu_.get(), host.size());
  gpu_->CopyFromHostBuffer(buffer.data(), a.data(), host.size() * sizeof(float));
  gpu_->Synchronize();
  EXPECT_EQ(a.ToHost(), host);
}

TEST_F(CudaDeviceTest, CopiesOutOnTheCopyStreamAfterTheWorkIssuedBeforeThem) {
  // Work on the compute stream, then a copy out on the copy stream: the
  // copy must see the work's result, and an event recorded after it must
  // cover both.
  const size_t n = size_t{1} << 24;  // 64 MiB: the fill takes a while
  DeviceArray<float> a(gpu_.get(), n);
  HostBuffer<float> out(gpu_.get());
  out.Reserve(n, 0);
  DeviceEvent start(gpu_.get()), copied(gpu_.get());
  start.Record();
  for (int i = 1; i <= 8; ++i) gpu_->Fill(a.data(), n, static_cast<float>(i));
  gpu_->CopyToHostBuffer(a.data(), out.data(), n * sizeof(float));
  copied.Record();
  copied.Wait();
  ASSERT_TRUE(copied.Done());
  ASSERT_TRUE(gpu_->status().ok()) << gpu_->status();
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(out.data()[i], 8.0f) << i;
  EXPECT_EQ(out.data()[n - 1], 8.0f);
  const double ms = copied.MillisSince(start);
  std::printf("8 fills and a copy out of 64 MiB: %.3f ms of device time\n", ms);
  EXPECT_GT(ms, 0.0);
}

TEST_F(CudaDeviceTest, AnEventIsNotDoneWhileTheWorkBeforeItRuns) {
  const size_t n = size_t{1} << 26;  // 256 MiB per fill
  DeviceArray<float> a(gpu_.get(), n);
  gpu_->Synchronize();
  DeviceEvent done(gpu_.get());
  for (int i = 0; i < 50; ++i) gpu_->Fill(a.data(), n, 1.0f);  // tens of ms
  done.Record();
  const bool done_at_once = done.Done();
  done.Wait();
  EXPECT_FALSE(done_at_once) << "50 fills of 256 MiB finished before the host asked";
  EXPECT_TRUE(done.Done());
}

TEST_F(CudaDeviceTest, GatherScatterAndZeroRows) {
  const int slot_count = 300, width = 13, stride = 17, n = 120;
  std::vector<uint32_t> pick(n);
  for (int i = 0; i < n; ++i)
    pick[i] = static_cast<uint32_t>((i * 7 + 3) % slot_count);  // distinct
  auto slots = Indices(pick);
  auto rows = Floats(Random(slot_count * stride, 31));
  auto out = Floats(std::vector<float>(n * width));
  cpu_.GatherRows(rows.cpu.data(), stride, slots.cpu.data(), n, width, out.cpu.data());
  gpu_->GatherRows(rows.gpu.data(), stride, slots.gpu.data(), n, width, out.gpu.data());
  Expect("GatherRows", out);
  auto in = Floats(Random(n * width, 32));
  cpu_.ScatterRows(in.cpu.data(), slots.cpu.data(), n, width, stride, rows.cpu.data());
  gpu_->ScatterRows(in.gpu.data(), slots.gpu.data(), n, width, stride, rows.gpu.data());
  Expect("ScatterRows", rows);
  cpu_.ZeroRows(slots.cpu.data(), n / 2, width - 3, stride, rows.cpu.data());
  gpu_->ZeroRows(slots.gpu.data(), n / 2, width - 3, stride, rows.gpu.data());
  Expect("ZeroRows", rows);
}

// Every table's gathers, scatters and zeros in one launch each: the
// CPU's table-by-table results, bit for bit (three tables of other widths
// and strides, one of them listed twice, and an empty one).
TEST_F(CudaDeviceTest, RowMovesOfEveryTableAtOnceEqualTheCpusTableByTable) {
  struct Shape {
    int slot_count, stride, width, n;
  };
  const Shape shapes[] = {{300, 17, 13, 120}, {50, 4, 4, 0}, {1000, 72, 65, 400}, {9, 3, 1, 5}};
  std::vector<Twin<float>> rows, packed;
  std::vector<Twin<uint32_t>> slots;
  for (int t = 0; t < 4; ++t) {
    const Shape& s = shapes[t];
    std::vector<uint32_t> pick(s.n);
    for (int i = 0; i < s.n; ++i) pick[i] = static_cast<uint32_t>((i * 7 + 3 * t) % s.slot_count);
    slots.push_back(Indices(pick));  // distinct: 7 is prime to every slot count
    rows.push_back(Floats(Random(static_cast<size_t>(s.slot_count) * s.stride, 40 + t)));
    packed.push_back(Floats(Random(static_cast<size_t>(s.n) * s.width, 50 + t)));
  }
  auto tables = [&](bool gpu) {
    std::vector<Device::RowsOfTable> out;
    for (int t = 0; t < 4; ++t) {
      const Shape& s = shapes[t];
      out.push_back({gpu ? rows[t].gpu.data() : rows[t].cpu.data(), s.stride,
                     gpu ? slots[t].gpu.data() : slots[t].cpu.data(), s.n, s.width,
                     gpu ? packed[t].gpu.data() : packed[t].cpu.data()});
    }
    return out;
  };
  const std::vector<Device::RowsOfTable> on_cpu = tables(false), on_gpu = tables(true);
  gpu_->ScatterRowsOfTables(on_gpu);
  for (const Device::RowsOfTable& t : on_cpu) {
    cpu_.ScatterRows(t.packed, t.slots, t.n, t.width, t.row_stride, t.rows);
  }
  for (int t = 0; t < 4; ++t) Expect("ScatterRowsOfTables " + std::to_string(t), rows[t]);
  // Zero the first rows of each table's list, then gather every listed row.
  std::vector<Device::RowsOfTable> half_cpu = on_cpu, half_gpu = on_gpu;
  for (size_t t = 0; t < half_cpu.size(); ++t) half_cpu[t].n = half_gpu[t].n = shapes[t].n / 2;
  gpu_->ZeroRowsOfTables(half_gpu);
  for (const Device::RowsOfTable& t : half_cpu) {
    cpu_.ZeroRows(t.slots, t.n, t.width, t.row_stride, t.rows);
  }
  for (int t = 0; t < 4; ++t) Expect("ZeroRowsOfTables " + std::to_string(t), rows[t]);
  gpu_->GatherRowsOfTables(on_gpu);
  for (const Device::RowsOfTable& t : on_cpu) {
    cpu_.GatherRows(t.rows, t.row_stride, t.slots, t.n, t.width, t.packed);
  }
  for (int t = 0; t < 4; ++t) Expect("GatherRowsOfTables " + std::to_string(t), packed[t]);
  ASSERT_TRUE(gpu_->status().ok()) << gpu_->status();
}

TEST_F(CudaDeviceTest, OptimizersMatchTheSharedMath) {
  using K = math::SparseOptimizerKind;
  for (K kind : {K::kSgd, K::kAdagrad, K::kRowwiseAdagrad, K::kAdam}) {
    math::SparseOptimizerConfig config;
    config.kind = kind;
    config.learning_rate = 0.05f;
    config.initial_accumulator = 0.1f;
    const std::string tag = " kind=" + std::to_string(static_cast<int>(kind));
    const double tolerance = 0;  // every optimizer bitwise (PowerOf, not powf)

    // Flat vector, three steps.
    const size_t n = 3001;
    std::vector<float> state_host(math::StateFloats(kind, n));
    math::InitOptimizerState(config, n, state_host.data());
    auto values = Floats(Random(n, 33));
    auto state = Floats(state_host);
    for (int step = 0; step < 3; ++step) {
      auto grad = Floats(Random(n, 34 + step));
      cpu_.ApplyOptimizer(config, n, grad.cpu.data(), values.cpu.data(), state.cpu.data());
      gpu_->ApplyOptimizer(config, n, grad.gpu.data(), values.gpu.data(), state.gpu.data());
    }
    Expect("ApplyOptimizer values" + tag, values, tolerance);
    if (!state_host.empty()) Expect("ApplyOptimizer state" + tag, state, tolerance);

    // Rows of a slot array, some listed, three steps.
    const int dim = 200, slot_count = 50, row_floats = math::RowFloats(kind, dim);
    std::vector<float> rows_host = Random(slot_count * row_floats, 40);
    for (int s = 0; s < slot_count; ++s) {
      math::InitOptimizerState(config, dim, rows_host.data() + s * row_floats + dim);
    }
    auto rows = Floats(rows_host);
    auto listed = Indices({3, 0, 49, 17, 18});
    for (int step = 0; step < 3; ++step) {
      auto grads = Floats(Random(slot_count * dim, 41 + step));
      cpu_.ApplyRowUpdates(config, dim, listed.cpu.data(), 5, grads.cpu.data(), dim,
                           rows.cpu.data(), row_floats);
      gpu_->ApplyRowUpdates(config, dim, listed.gpu.data(), 5, grads.gpu.data(), dim,
                            rows.gpu.data(), row_floats);
    }
    Expect("ApplyRowUpdates" + tag, rows, tolerance);
  }
}

// Every table's owned rows in one launch: tables of each optimizer and of
// different dims, their gradients consumed (zeroed) after the update.
TEST_F(CudaDeviceTest, BatchedRowUpdatesEqualTheTableByTableOnes) {
  using K = math::SparseOptimizerKind;
  struct Table {
    K kind;
    int dim;
    std::vector<uint32_t> listed;
  };
  const std::vector<Table> shapes = {{K::kSgd, 8, {3, 0, 9}},
                                     {K::kAdagrad, 64, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
                                     {K::kRowwiseAdagrad, 200, {7, 5}},
                                     {K::kAdam, 33, {0, 11, 4}},
                                     {K::kAdam, 16, {}}};
  const int slot_count = 12;
  std::vector<Twin<float>> rows, grads;
  std::vector<Twin<uint32_t>> listed;
  std::vector<math::SparseOptimizerConfig> configs;
  for (size_t t = 0; t < shapes.size(); ++t) {
    math::SparseOptimizerConfig config;
    config.kind = shapes[t].kind;
    config.learning_rate = 0.05f;
    config.initial_accumulator = 0.1f;
    configs.push_back(config);
    const int row_floats = math::RowFloats(shapes[t].kind, shapes[t].dim);
    std::vector<float> rows_host = Random(slot_count * row_floats, 90 + t);
    for (int s = 0; s < slot_count; ++s) {
      math::InitOptimizerState(config, shapes[t].dim,
                               rows_host.data() + s * row_floats + shapes[t].dim);
    }
    rows.push_back(Floats(rows_host));
    listed.push_back(Indices(shapes[t].listed));
    grads.push_back(Floats(Random(slot_count * shapes[t].dim, 100 + t)));
  }
  auto tables_on = [&](bool gpu) {
    std::vector<Device::RowUpdateTable> tables;
    for (size_t t = 0; t < shapes.size(); ++t) {
      Device::RowUpdateTable u;
      u.optimizer = configs[t];
      u.dim = shapes[t].dim;
      u.slots = gpu ? listed[t].gpu.data() : listed[t].cpu.data();
      u.n = static_cast<int>(shapes[t].listed.size());
      u.grads = gpu ? grads[t].gpu.data() : grads[t].cpu.data();
      u.rows = gpu ? rows[t].gpu.data() : rows[t].cpu.data();
      u.row_stride = math::RowFloats(shapes[t].kind, shapes[t].dim);
      tables.push_back(u);
    }
    return tables;
  };
  for (int step = 0; step < 2; ++step) {
    cpu_.ApplyRowUpdatesAndZero(tables_on(false));
    gpu_->ApplyRowUpdatesAndZero(tables_on(true));
    for (size_t t = 0; t < shapes.size(); ++t) {
      Expect("ApplyRowUpdatesAndZero rows " + std::to_string(t), rows[t]);
      Expect("ApplyRowUpdatesAndZero grads " + std::to_string(t), grads[t]);
      grads[t].cpu.CopyFromHost(Random(slot_count * shapes[t].dim, 110 + t + 10 * step));
      grads[t].gpu.CopyFromHost(grads[t].cpu.ToHost());
    }
  }
}

TEST_F(CudaDeviceTest, FailedAllocationIsKeptAndNamed) {
  void* p = gpu_->AllocateBytes(size_t{1} << 50);  // 1 PiB
  EXPECT_EQ(p, nullptr);
  const absl::Status s = gpu_->status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("1125899906842624 bytes"), std::string::npos) << s;
  gpu_.reset();  // the kept error is the expected outcome here
}

}  // namespace
}  // namespace herald::worker
