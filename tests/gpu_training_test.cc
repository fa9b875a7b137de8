// GPU workers execute the scheduler's plans and must train the model of the
// single-process CPU reference (within float rounding: cuBLAS sums in its
// own order), for every model kind: one GPU worker, two GPU workers sharing
// the GPU (Gloo through the host), and a GPU worker beside a CPU worker.
// The same GPU run twice gives the same bits. Skips visibly without a GPU.

#include "common/testing/job_spec_testing.h"
#include "gtest/gtest.h"
#include "tests/planned_training.h"
#include "worker/device/cpu_device.h"
#include "worker/reference/reference_trainer.h"
#include "worker/runtime/device_factory.h"

namespace herald::scheduler {
namespace {

constexpr uint32_t kNumDense = 3;
constexpr uint32_t kTables = 3;
constexpr uint32_t kDim = 8;
constexpr uint32_t kSlots = 40;

proto::JobSpec Spec(proto::ModelKind kind) {
  proto::JobSpec spec;
  spec.set_seed(17);
  spec.set_num_dense(kNumDense);
  spec.mutable_model()->set_kind(kind);
  spec.mutable_model()->add_top_mlp(16);
  spec.mutable_model()->add_top_mlp(8);
  spec.mutable_model()->add_bottom_mlp(8);
  spec.mutable_model()->add_bottom_mlp(kDim);
  spec.mutable_model()->set_cross_layers(2);
  herald::testing::UseAdamAndAdagrad(&spec, 0.01f, 0.05f);
  for (uint32_t t = 0; t < kTables; ++t) {
    auto* table = spec.add_tables();
    table->set_dim(kDim);
    if (t == 2) table->set_pooling(proto::POOLING_MEAN);
  }
  return spec;
}

class GpuTraining : public ::testing::TestWithParam<proto::ModelKind> {
 protected:
  void SetUp() override {
    auto gpu = worker::DescribeDevice("cuda:0");
    if (!gpu.ok()) GTEST_SKIP() << "SKIPPED (no GPU): " << gpu.status().message();
  }
};

TEST_P(GpuTraining, GpuWorkersEqualTheCpuReference) {
  const proto::JobSpec base = Spec(GetParam());
  const std::vector<data::KeyBatch> batches = SkewedBatches(6, 24, kTables, kNumDense);
  worker::CpuDevice ref_device;
  auto reference = worker::ReferenceTrainer::Create(base, &ref_device);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<double> ref_losses;
  for (const data::KeyBatch& b : batches) ref_losses.push_back(*(*reference)->Train(b));

  const std::vector<std::vector<std::string>> setups = {
      {"cuda:0"}, {"cuda:0"}, {"cuda:0", "cuda:0"}, {"cuda:0", "cpu"}};
  std::vector<float> first_dense;
  for (size_t run = 0; run < setups.size(); ++run) {
    const std::vector<std::string>& devices = setups[run];
    const uint32_t workers = static_cast<uint32_t>(devices.size());
    const std::string tag = proto::ModelKind_Name(GetParam()) + " run " + std::to_string(run) +
                            " (" + devices[0] + (workers > 1 ? " + " + devices[1] : "") + ")";
    proto::JobSpec spec = base;
    spec.set_name("gpu-" + std::to_string(run));
    PlannedRun planned;
    planned.workers = workers;
    planned.capacity = 12;  // small: rows are evicted and written back
    planned.slots = kSlots;
    planned.devices = devices;
    std::vector<float> dense;
    const absl::Status same =
        TrainPlannedAndCompare(spec, batches, planned, **reference, ref_losses, &dense);
    EXPECT_TRUE(same.ok()) << tag << ": " << same;
    if (run == 0) first_dense = dense;
    if (run == 1) {
      EXPECT_EQ(dense, first_dense) << tag << ": not the same bits twice";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, GpuTraining,
                         ::testing::Values(proto::MODEL_WIDE_AND_DEEP, proto::MODEL_DEEPFM,
                                           proto::MODEL_DCN, proto::MODEL_NCF, proto::MODEL_DLRM),
                         [](const auto& info) { return proto::ModelKind_Name(info.param); });

}  // namespace
}  // namespace herald::scheduler
