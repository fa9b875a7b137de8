#include "scheduler/jobs/dense_collective.h"

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

proto::RegisterRequest Worker(proto::DeviceKind kind, const std::string& host,
                              const std::string& uuid) {
  proto::RegisterRequest r;
  r.set_role(proto::NODE_ROLE_WORKER);
  r.set_device(kind);
  r.set_hostname(host);
  r.set_device_uuid(uuid);
  return r;
}

TEST(ChooseDenseCollective, NcclOnlyWhenEveryWorkerHasAGpuOfItsOwn) {
  const auto gpu = proto::DEVICE_KIND_CUDA;
  const auto cpu = proto::DEVICE_KIND_CPU;
  EXPECT_EQ(ChooseDenseCollective({Worker(gpu, "a", "GPU-1"), Worker(gpu, "a", "GPU-2")}),
            proto::DENSE_COLLECTIVE_NCCL);
  // The same UUID on two hosts is two GPUs (UUIDs are per host here).
  EXPECT_EQ(ChooseDenseCollective({Worker(gpu, "a", "GPU-1"), Worker(gpu, "b", "GPU-1")}),
            proto::DENSE_COLLECTIVE_NCCL);
  // Two workers on one GPU: NCCL refuses that, so Gloo through the host.
  EXPECT_EQ(ChooseDenseCollective({Worker(gpu, "a", "GPU-1"), Worker(gpu, "a", "GPU-1")}),
            proto::DENSE_COLLECTIVE_GLOO);
  // Any CPU worker, or a CUDA worker that did not say which GPU: Gloo.
  EXPECT_EQ(ChooseDenseCollective({Worker(gpu, "a", "GPU-1"), Worker(cpu, "a", "")}),
            proto::DENSE_COLLECTIVE_GLOO);
  EXPECT_EQ(ChooseDenseCollective({Worker(gpu, "a", "GPU-1"), Worker(gpu, "a", "")}),
            proto::DENSE_COLLECTIVE_GLOO);
  EXPECT_EQ(ChooseDenseCollective({Worker(cpu, "a", ""), Worker(cpu, "b", "")}),
            proto::DENSE_COLLECTIVE_GLOO);
  // One worker all-reduces with nobody.
  EXPECT_EQ(ChooseDenseCollective({Worker(gpu, "a", "GPU-1")}), proto::DENSE_COLLECTIVE_GLOO);
}

}  // namespace
}  // namespace herald::scheduler
