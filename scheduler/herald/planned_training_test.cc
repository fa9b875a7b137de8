// The scheduler's plans executed by real workers (StepExecutor, Gloo, two
// in-process PS shards): under every policy and 1-3 workers the model equals
// the single-process reference trained on the whole global batch — the proof
// that scheduling does not change the model.

#include "gtest/gtest.h"
#include "ps_server/client/sharded_ps_client.h"
#include "scheduler/herald/planner.h"
#include "scheduler/herald/skewed_batches.h"
#include "scheduler/herald/step_builder.h"
#include "worker/reference/reference_trainer.h"
#include "worker/testing/in_process_training.h"

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
  spec.mutable_dense_optimizer()->set_kind(proto::OPTIMIZER_ADAM);
  spec.mutable_dense_optimizer()->set_learning_rate(0.01f);
  spec.mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_ADAGRAD);
  spec.mutable_sparse_optimizer()->set_learning_rate(0.05f);
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
    const std::string tag = GetParam() + " workers=" + std::to_string(workers);
    proto::JobSpec spec = base;
    spec.set_name("planned-" + std::to_string(workers));
    PlannerOptions o;
    o.policy = *PolicyByName(GetParam());
    o.num_workers = workers;
    o.capacity.assign(kTables, 12);  // small: rows are evicted and written back
    o.slots.assign(kTables, kSlots);
    auto planner = Planner::Create(o);
    ASSERT_TRUE(planner.ok());
    std::vector<std::vector<worker::Step>> steps;
    for (size_t t = 0; t < batches.size(); ++t) {
      auto plan = (*planner)->Plan(batches[t], t + 1 < batches.size() ? &batches[t + 1] : nullptr);
      ASSERT_TRUE(plan.ok()) << tag << ": " << plan.status();
      steps.emplace_back();
      for (uint32_t w = 0; w < workers; ++w) {
        steps.back().push_back(BuildStep(batches[t], kNumDense, *plan, w, spec.name()));
      }
    }
    ps::InProcessPsCluster cluster(2);
    ASSERT_TRUE(cluster.client().StartJob(spec.name(), spec, workers).ok());
    auto out = worker::testing::TrainSteps(spec, steps, workers, kSlots, &cluster.client());
    ASSERT_TRUE(out.ok()) << tag << ": " << out.status();
    std::vector<ps::TableKeys> keys(kTables);
    for (uint32_t t = 0; t < kTables; ++t) {
      keys[t].table = TableId(t);
      for (Key k = 0; k < 30; ++k) keys[t].keys.push_back(k + 1000 * t);
    }
    const absl::Status same = worker::testing::CompareWithReference(
        *out, **reference, ref_losses, &cluster.client(), spec.name(), batches.size(), keys);
    EXPECT_TRUE(same.ok()) << tag << ": " << same;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, PlannedTraining,
                         ::testing::Values("nocache", "vanilla", "herald", "herald-alloc-only",
                                           "herald-comm-only"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace herald::scheduler
