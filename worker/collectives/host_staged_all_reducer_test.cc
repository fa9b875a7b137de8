#include "worker/collectives/host_staged_all_reducer.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "worker/collectives/gloo_all_reducer.h"
#include "worker/device/cpu_device.h"
#include "worker/device/device_array.h"

namespace herald::worker {
namespace {

// Two ranks whose data lives in DeviceArrays (CPU device here; the CUDA
// path is the same calls): both end with the rank-order sum, same bits.
TEST(HostStagedAllReducer, DeviceBuffersGetTheGlooSumOnEveryRank) {
  const int size = 2;
  const size_t n = 777;
  InProcessKvStore store;
  std::vector<std::vector<float>> result(size);
  std::vector<absl::Status> status(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      CpuDevice device;
      std::vector<float> host(n);
      for (size_t i = 0; i < n; ++i) host[i] = 0.5f * (r + 1) + 0.01f * i;
      DeviceArray<float> data(&device, n);
      data.CopyFromHost(host);
      GlooOptions options;
      options.prefix = "staged";
      auto gloo = GlooAllReducer::Connect(&store, r, size, options);
      if (!gloo.ok()) {
        status[r] = gloo.status();
        return;
      }
      HostStagedAllReducer reducer(&device, std::move(*gloo));
      EXPECT_EQ(reducer.rank(), r);
      EXPECT_EQ(reducer.size(), size);
      status[r] = reducer.AllReduceSum(data.data(), n);
      result[r] = data.ToHost();
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) ASSERT_TRUE(status[r].ok()) << status[r];
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(result[0][i], (0.5f + 0.01f * i) + (1.0f + 0.01f * i)) << i;
  }
  EXPECT_EQ(result[0], result[1]);
}

}  // namespace
}  // namespace herald::worker
