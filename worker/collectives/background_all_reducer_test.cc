#include "worker/collectives/background_all_reducer.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "worker/collectives/gloo_all_reducer.h"
#include "worker/collectives/host_staged_all_reducer.h"
#include "worker/device/cpu_device.h"
#include "worker/device/device_array.h"

namespace herald::worker {
namespace {

// Two Gloo ranks of one in-process store, connected at once.
std::vector<std::unique_ptr<DenseAllReducer>> ConnectTwo(const std::string& prefix) {
  static InProcessKvStore store;  // outlives the reducers; one prefix per test
  std::vector<std::unique_ptr<DenseAllReducer>> out(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      GlooOptions options;
      options.prefix = prefix;
      options.timeout = absl::Seconds(20);
      auto gloo = GlooAllReducer::Connect(&store, r, 2, options);
      if (gloo.ok()) out[r] = std::make_unique<BackgroundAllReducer>(std::move(*gloo));
    });
  }
  for (auto& t : ranks) t.join();
  return out;
}

// One thread starts rank 0 and then rank 1: rank 0's Start must return
// before rank 1 joins (a Start that reduced on the caller would wait for
// rank 1 until the Gloo timeout and fail). Both get the sum, same bits.
TEST(BackgroundAllReducer, StartReturnsWhileThePeersStillHaveToJoin) {
  std::vector<std::unique_ptr<DenseAllReducer>> r = ConnectTwo("background");
  ASSERT_TRUE(r[0] && r[1]);
  EXPECT_EQ(r[1]->rank(), 1);
  EXPECT_EQ(r[1]->size(), 2);
  std::vector<float> a(1001), b(1001);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = 0.25f * i;
    b[i] = 1.0f + 0.5f * i;
  }
  for (int round = 0; round < 3; ++round) {  // reusable
    std::vector<float> x = a, y = b;
    r[0]->StartAllReduceSum(x.data(), x.size());
    r[1]->StartAllReduceSum(y.data(), y.size());
    ASSERT_TRUE(r[0]->FinishAllReduceSum().ok());
    ASSERT_TRUE(r[1]->FinishAllReduceSum().ok());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], a[i] + b[i]) << i;
    EXPECT_EQ(x, y);
  }
  // Nothing started: Finish has nothing to wait for.
  EXPECT_TRUE(r[0]->FinishAllReduceSum().ok());
}

// Buckets: three ranges started one after another on each rank, finished
// once, give every element the bits of one whole all-reduce.
TEST(BackgroundAllReducer, BucketsStartedInTurnReduceLikeTheWhole) {
  std::vector<std::unique_ptr<DenseAllReducer>> r = ConnectTwo("buckets");
  ASSERT_TRUE(r[0] && r[1]);
  EXPECT_TRUE(r[0]->reduces_in_background());
  std::vector<float> a(1001), b(1001);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = 0.1f * i + 0.3f;
    b[i] = 1.7f - 0.05f * i;
  }
  std::vector<float> whole_x = a, whole_y = b;
  r[0]->StartAllReduceSum(whole_x.data(), whole_x.size());
  r[1]->StartAllReduceSum(whole_y.data(), whole_y.size());
  ASSERT_TRUE(r[0]->FinishAllReduceSum().ok());
  ASSERT_TRUE(r[1]->FinishAllReduceSum().ok());

  std::vector<float> x = a, y = b;
  const size_t cuts[] = {1001, 600, 17, 0};  // from the end, as a backward frees them
  for (int rank = 0; rank < 2; ++rank) {
    float* data = rank == 0 ? x.data() : y.data();
    for (int k = 0; k < 3; ++k)
      r[rank]->StartAllReduceSum(data + cuts[k + 1], cuts[k] - cuts[k + 1]);
  }
  ASSERT_TRUE(r[0]->FinishAllReduceSum().ok());
  ASSERT_TRUE(r[1]->FinishAllReduceSum().ok());
  EXPECT_EQ(x, whole_x);
  EXPECT_EQ(y, whole_x);
}

// Device memory through the host reducer on its thread: the copies stay on
// the caller, the reduction does not block it.
TEST(BackgroundAllReducer, HostStagedDeviceDataStartsAndFinishes) {
  std::vector<std::unique_ptr<DenseAllReducer>> host = ConnectTwo("staged-background");
  ASSERT_TRUE(host[0] && host[1]);
  CpuDevice device;
  HostStagedAllReducer r0(&device, std::move(host[0]));
  HostStagedAllReducer r1(&device, std::move(host[1]));
  DeviceArray<float> x(&device, 3), y(&device, 3);
  x.CopyFromHost({1, 2, 3});
  y.CopyFromHost({10, 20, 30});
  r0.StartAllReduceSum(x.data(), 3);
  r1.StartAllReduceSum(y.data(), 3);
  ASSERT_TRUE(r0.FinishAllReduceSum().ok());
  ASSERT_TRUE(r1.FinishAllReduceSum().ok());
  EXPECT_EQ(x.ToHost(), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(y.ToHost(), x.ToHost());
}

}  // namespace
}  // namespace herald::worker
