#include "scheduler/planner/step_builder.h"

#include "plan/plan_codec.h"
#include "plan/step_codec.h"
#include "plan/wire_columns.h"

namespace herald::scheduler {

proto::WorkerStep BuildStep(const data::KeyBatch& batch, uint32_t num_dense,
                            const IterationPlan& plan, uint32_t worker, const std::string& job_id) {
  const WorkerPlan& wp = plan.workers[worker];
  proto::WorkerStep step;
  step.set_job_id(job_id);
  step.set_iteration(plan.iteration);
  step.set_global_batch_size(batch.num_samples);
  proto::StepSamples* samples = step.mutable_samples();
  samples->set_num_samples(static_cast<uint32_t>(wp.samples.size()));
  const uint32_t num_labels = batch.num_labels;
  if (num_labels != 1) samples->set_labels_per_sample(num_labels);
  std::string* labels = samples->mutable_labels();
  std::string* dense = samples->mutable_dense();
  labels->reserve(wp.samples.size() * num_labels * sizeof(float));
  dense->reserve(wp.samples.size() * num_dense * sizeof(float));
  for (uint32_t s : wp.samples) {
    labels->append(reinterpret_cast<const char*>(batch.labels.data() + size_t{s} * num_labels),
                   num_labels * sizeof(float));
    dense->append(reinterpret_cast<const char*>(batch.dense.data() + size_t{s} * num_dense),
                  num_dense * sizeof(float));
  }
  // Each sample's place in the global batch: its dropout masks.
  plan::PackColumn(wp.samples, samples->mutable_sample_indices());
  plan::EncodeTableSamples(wp.slots, samples);
  plan::EncodeCachePlan(wp.tables, step.mutable_plan());
  return step;
}

}  // namespace herald::scheduler
