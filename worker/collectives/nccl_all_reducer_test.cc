// NcclAllReducer on real GPUs: one rank per visible GPU (NCCL needs a GPU
// per rank). Skips visibly with fewer GPUs than a test needs.

#include "worker/collectives/nccl_all_reducer.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/device_array.h"

namespace herald::worker {
namespace {

int GpusOrSkipReason(std::string* why) { return CudaDeviceCount(why); }

std::unique_ptr<CudaDevice> Gpu(int ordinal) {
  CudaDeviceOptions options;
  options.ordinal = ordinal;
  auto device = CudaDevice::Create(options);
  EXPECT_TRUE(device.ok()) << device.status();
  return device.ok() ? std::move(*device) : nullptr;
}

TEST(NcclAllReducer, EveryRankGetsTheSameSum) {
  std::string why;
  const int gpus = GpusOrSkipReason(&why);
  if (gpus == 0) GTEST_SKIP() << "SKIPPED (no GPU): " << why;
  const int size = gpus;  // 1 GPU: a one-rank communicator still runs NCCL
  const size_t n = 100003;
  InProcessKvStore store;
  std::vector<std::vector<float>> result(size);
  std::vector<absl::Status> status(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      std::unique_ptr<CudaDevice> device = Gpu(r);
      if (device == nullptr) return;
      std::vector<float> host(n);
      for (size_t i = 0; i < n; ++i) host[i] = 0.25f * (r + 1) + 1e-4f * (i % 1000);
      DeviceArray<float> data(device.get(), n);
      data.CopyFromHost(host);
      NcclOptions options;
      options.prefix = "job-nccl";
      auto reducer = NcclAllReducer::Connect(&store, r, size, device.get(), options);
      if (!reducer.ok()) {
        status[r] = reducer.status();
        return;
      }
      status[r] = (*reducer)->AllReduceSum(data.data(), n);
      if (status[r].ok()) status[r] = (*reducer)->AllReduceSum(data.data(), n);  // reused
      result[r] = data.ToHost();
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) ASSERT_TRUE(status[r].ok()) << "rank " << r << ": " << status[r];
  for (size_t i = 0; i < n; i += 997) {
    float once = 0;
    for (int r = 0; r < size; ++r) once += 0.25f * (r + 1) + 1e-4f * (i % 1000);
    // Summation order inside NCCL is its own: compare within rounding.
    EXPECT_NEAR(result[0][i], size * once, 1e-5f * size * once) << i;
  }
  for (int r = 1; r < size; ++r) EXPECT_EQ(result[r], result[0]) << "rank " << r;
}

TEST(NcclAllReducer, MissingPeerIsAnErrorNotAHang) {
  std::string why;
  if (GpusOrSkipReason(&why) == 0) GTEST_SKIP() << "SKIPPED (no GPU): " << why;
  std::unique_ptr<CudaDevice> device = Gpu(0);
  ASSERT_NE(device, nullptr);
  InProcessKvStore store;
  NcclOptions options;
  options.timeout = absl::Seconds(3);
  // Rank 1 of 2 never sees rank 0's unique id: the store wait times out.
  auto reducer = NcclAllReducer::Connect(&store, 1, 2, device.get(), options);
  ASSERT_FALSE(reducer.ok());
  EXPECT_EQ(reducer.status().code(), absl::StatusCode::kDeadlineExceeded) << reducer.status();
  // Rank 0 of 2 publishes its id but rank 1 never joins: init times out.
  auto alone = NcclAllReducer::Connect(&store, 0, 2, device.get(), options);
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().code(), absl::StatusCode::kDeadlineExceeded) << alone.status();
}

}  // namespace
}  // namespace herald::worker
