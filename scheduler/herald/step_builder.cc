#include "scheduler/herald/step_builder.h"

namespace herald::scheduler {

worker::Step BuildStep(const data::KeyBatch& batch, uint32_t num_dense, const IterationPlan& plan,
                       uint32_t worker, const std::string& job_id) {
  const WorkerPlan& wp = plan.workers[worker];
  worker::Step step;
  step.job_id = job_id;
  step.iteration = plan.iteration;
  step.num_samples = static_cast<uint32_t>(wp.samples.size());
  step.global_batch_size = batch.num_samples;
  step.labels.reserve(wp.samples.size());
  step.dense.reserve(wp.samples.size() * num_dense);
  for (uint32_t s : wp.samples) {
    step.labels.push_back(batch.labels[s]);
    step.dense.insert(step.dense.end(), batch.dense.begin() + size_t{s} * num_dense,
                      batch.dense.begin() + size_t{s + 1} * num_dense);
  }
  step.samples = wp.slots;
  step.plan = wp.tables;
  return step;
}

}  // namespace herald::scheduler
