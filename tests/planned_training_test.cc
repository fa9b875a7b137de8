// The scheduler's plans executed by real workers (StepExecutor, Gloo, two
// in-process PS shards): under every policy (het with staleness 0) and 1-3
// workers the model equals
// the single-process reference trained on the whole global batch — the proof
// that scheduling does not change the model.

#include "tests/planned_training.h"

#include "common/testing/job_spec_testing.h"
#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"
#include "worker/reference/reference_trainer.h"

namespace herald::scheduler {
namespace {

constexpr uint32_t kNumDense = 2;
constexpr uint32_t kTables = 3;
constexpr uint32_t kSlots = 40;

proto::JobSpec Spec() {
  proto::JobSpec spec;
  spec.set_seed(11);
  spec.set_num_dense(kNumDense);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_model()->add_top_mlp(8);
  herald::testing::UseAdamAndAdagrad(&spec, 0.01f, 0.05f);
  for (uint32_t t = 0; t < kTables; ++t) {
    auto* table = spec.add_tables();
    table->set_dim(4);
    if (t == 2) table->set_pooling(proto::POOLING_MEAN);
  }
  return spec;
}

class PlannedTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(PlannedTraining, EqualsTheReferenceForOneTwoAndThreeWorkers) {
  const proto::JobSpec base = Spec();
  const std::vector<data::KeyBatch> batches =
      SkewedBatches(/*iterations=*/6, /*batch_size=*/18, kTables, kNumDense);
  worker::CpuDevice ref_device;
  auto reference = worker::ReferenceTrainer::Create(base, &ref_device);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<double> ref_losses;
  for (const data::KeyBatch& b : batches) ref_losses.push_back(*(*reference)->Train(b));

  for (uint32_t workers : {1u, 2u, 3u}) {
    proto::JobSpec spec = base;
    spec.set_name("planned-" + std::to_string(workers));
    PlannedRun run;
    run.policy = GetParam();
    run.workers = workers;
    run.capacity = 12;  // small: rows are evicted and written back
    run.slots = kSlots;
    const absl::Status same = TrainPlannedAndCompare(spec, batches, run, **reference, ref_losses);
    EXPECT_TRUE(same.ok()) << GetParam() << " workers=" << workers << ": " << same;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, PlannedTraining,
                         ::testing::Values("nocache", "vanilla", "herald", "herald-alloc-only",
                                           "herald-comm-only", "het"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace herald::scheduler
