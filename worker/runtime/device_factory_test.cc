#include "worker/runtime/device_factory.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/device_array.h"
#include "worker/device/null_device.h"

namespace herald::worker {
namespace {

TEST(DeviceFactory, NamesAreCheckedAndTheCpuIsAlwaysThere) {
  EXPECT_TRUE(CheckDeviceName("cpu").ok());
  EXPECT_TRUE(CheckDeviceName("cuda:0").ok());
  EXPECT_TRUE(CheckDeviceName("cuda:12").ok());
  for (const char* bad :
       {"", "CPU", "gpu:0", "cuda", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "cuda:+1"}) {
    const absl::Status s = CheckDeviceName(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find(std::string("'") + bad + "'"), std::string::npos) << s;
  }
  auto cpu = CreateDevice("cpu", {});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ((*cpu)->name(), "cpu");
  auto described = DescribeDevice("cpu");
  ASSERT_TRUE(described.ok());
  EXPECT_EQ(described->kind, proto::DEVICE_KIND_CPU);
  EXPECT_TRUE(described->uuid.empty());
}

TEST(DeviceFactory, TheNullDeviceExistsOnlyOnceRegisteredAndDoesNoWork) {
  EXPECT_EQ(CheckDeviceName("null").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(CreateDevice("null", {}).ok());
  RegisterNullDevice();
  EXPECT_TRUE(CheckDeviceName("null").ok());
  auto described = DescribeDevice("null");
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->kind, proto::DEVICE_KIND_CPU);
  auto device = CreateDevice("null", {});
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->name(), "null");
  // Memory reads as zeros, and nothing written to the device reaches it.
  DeviceArray<float> a(device->get(), 1024);
  const std::vector<float> ones(1024, 1.0f);
  (*device)->CopyToDevice(ones.data(), a.data(), ones.size() * sizeof(float));
  (*device)->Axpy(1024, 2.0f, a.data(), a.data());
  std::vector<float> back(1024, 7.0f);
  (*device)->CopyToHost(a.data(), back.data(), back.size() * sizeof(float));
  EXPECT_EQ(back, std::vector<float>(1024, 0.0f));  // zeros: the ones never arrived
  EXPECT_TRUE((*device)->status().ok());
}

TEST(DeviceFactory, MissingGpuIsRefusedSayingWhy) {
  // cuda:4096 exists nowhere: a CUDA build says how many GPUs it sees, a
  // build without CUDA says it has none.
  auto device = CreateDevice("cuda:4096", {});
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kFailedPrecondition) << device.status();
  const std::string want = BuiltWithCuda() ? "cuda:4096 does not exist" : "built without CUDA";
  EXPECT_NE(device.status().message().find(want), std::string::npos) << device.status();
  EXPECT_FALSE(DescribeDevice("cuda:4096").ok());
}

TEST(DeviceFactory, OneRankNeedsNoCollectiveAndNcclNeedsAGpu) {
  auto cpu = CreateDevice("cpu", {});
  ASSERT_TRUE(cpu.ok());
  InProcessKvStore store;
  auto single = ConnectDenseAllReducer(cpu->get(), proto::DENSE_COLLECTIVE_NCCL, &store, 0, 1, {});
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ((*single)->size(), 1);
  auto nccl = ConnectDenseAllReducer(cpu->get(), proto::DENSE_COLLECTIVE_NCCL, &store, 0, 2, {});
  ASSERT_FALSE(nccl.ok());
  EXPECT_EQ(nccl.status().code(), absl::StatusCode::kFailedPrecondition) << nccl.status();
}

TEST(DeviceFactory, GlooRanksOnCpuDevicesSum) {
  InProcessKvStore store;
  std::vector<std::vector<float>> out(2);
  std::vector<absl::Status> status(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      auto device = CreateDevice("cpu", {});
      CollectiveOptions options;
      options.gloo.prefix = "factory";
      auto reducer = ConnectDenseAllReducer(device->get(), proto::DENSE_COLLECTIVE_UNSPECIFIED,
                                            &store, r, 2, options);
      if (!reducer.ok()) {
        status[r] = reducer.status();
        return;
      }
      DeviceArray<float> data(device->get(), 3);
      data.CopyFromHost({1.0f * (r + 1), 2.0f, 3.0f});
      status[r] = (*reducer)->AllReduceSum(data.data(), 3);
      out[r] = data.ToHost();
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(status[r].ok()) << status[r];
  EXPECT_EQ(out[0], (std::vector<float>{3, 4, 6}));
  EXPECT_EQ(out[1], out[0]);
}

}  // namespace
}  // namespace herald::worker
