#include "tests/planned_training.h"

#include "absl/strings/str_cat.h"
#include "common/rng.h"
#include "common/status.h"
#include "plan/step_codec.h"
#include "ps_server/client/in_process_ps_cluster.h"
#include "ps_server/client/sharded_ps_client.h"
#include "scheduler/planner/planner.h"
#include "scheduler/planner/step_builder.h"
#include "worker/testing/in_process_training.h"

namespace herald::scheduler {

std::vector<data::KeyBatch> SkewedBatches(size_t iterations, uint32_t batch_size, uint32_t tables,
                                          uint32_t num_dense, uint32_t keys_per_table) {
  CounterRng rng(5, 1, 2);
  std::vector<data::KeyBatch> out;
  for (size_t it = 0; it < iterations; ++it) {
    data::KeyBatch b;
    b.num_samples = batch_size;
    b.tables.resize(tables);
    for (uint32_t i = 0; i < batch_size; ++i) {
      b.labels.push_back(rng.NextFloat() < 0.3f ? 1.0f : 0.0f);
      for (uint32_t d = 0; d < num_dense; ++d) b.dense.push_back(rng.NextFloat());
      for (uint32_t t = 0; t < tables; ++t) {
        const int hots = t + 1 == tables ? 1 + static_cast<int>(rng.NextBelow(2)) : 1;
        for (int h = 0; h < hots; ++h) {
          const double u = rng.NextDouble();
          b.tables[t].keys.push_back(static_cast<Key>(keys_per_table * u * u) + 1000 * t);
        }
        b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<proto::WorkerStep>>> PlanWorkerSteps(
    const proto::JobSpec& spec, const std::vector<data::KeyBatch>& batches, const PlannedRun& run) {
  const uint32_t tables = static_cast<uint32_t>(spec.tables_size());
  PlannerOptions o;
  HERALD_ASSIGN_OR_RETURN(o.policy, PolicyByName(run.policy));
  o.num_workers = run.workers;
  o.capacity.assign(tables, run.capacity);
  o.slots.assign(tables, run.slots);
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner, Planner::Create(o));
  std::vector<std::vector<proto::WorkerStep>> steps;
  for (size_t t = 0; t < batches.size(); ++t) {
    const bool last = t + 1 == batches.size();
    HERALD_ASSIGN_OR_RETURN(IterationPlan plan,
                            planner->Plan(batches[t], last ? nullptr : &batches[t + 1]));
    steps.emplace_back();
    for (uint32_t w = 0; w < run.workers; ++w) {
      steps.back().push_back(BuildStep(batches[t], spec.num_dense(), plan, w, spec.name()));
      steps.back().back().set_last(last);
    }
  }
  return steps;
}

absl::Status TrainPlannedAndCompare(const proto::JobSpec& spec,
                                    const std::vector<data::KeyBatch>& batches,
                                    const PlannedRun& run,
                                    const worker::ReferenceTrainer& reference,
                                    const std::vector<double>& reference_losses,
                                    std::vector<float>* dense) {
  const uint32_t tables = static_cast<uint32_t>(spec.tables_size());
  HERALD_ASSIGN_OR_RETURN(auto wire, PlanWorkerSteps(spec, batches, run));
  std::vector<std::vector<plan::Step>> steps;
  for (const std::vector<proto::WorkerStep>& iteration : wire) {
    steps.emplace_back();
    for (const proto::WorkerStep& worker_step : iteration) {
      HERALD_ASSIGN_OR_RETURN(plan::Step step,
                              plan::DecodeWorkerStep(worker_step, tables, spec.num_dense()));
      steps.back().push_back(std::move(step));
    }
  }
  ps::InProcessPsCluster cluster(2);
  HERALD_RETURN_IF_ERROR(cluster.client().StartJob(spec.name(), spec, run.workers).status());
  HERALD_ASSIGN_OR_RETURN(worker::testing::TrainingOutcome out,
                          worker::testing::TrainSteps(spec, steps, run.workers, run.slots,
                                                      &cluster.client(), run.devices));
  std::vector<ps::TableKeys> keys(tables);
  for (uint32_t t = 0; t < tables; ++t) {
    keys[t].table = TableId(t);
    for (Key k = 0; k < 30; ++k) keys[t].keys.push_back(k + 1000 * t);
  }
  if (dense != nullptr) *dense = out.dense;
  return worker::testing::CompareWithReference(out, reference, reference_losses, &cluster.client(),
                                               spec.name(), batches.size(), keys);
}

}  // namespace herald::scheduler
