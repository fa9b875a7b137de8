#include "tests/harness/small_job.h"

#include "absl/strings/str_cat.h"
#include "common/testing/job_spec_testing.h"

namespace herald::testing {

proto::JobSpec GeneratedJob::Spec() const {
  proto::JobSpec spec;
  spec.set_name(name);
  spec.set_seed(seed);
  spec.set_num_dense(13);
  spec.mutable_model()->set_kind(model);
  for (uint32_t w : top_mlp) spec.mutable_model()->add_top_mlp(w);
  for (uint32_t w : bottom_mlp) spec.mutable_model()->add_bottom_mlp(w);
  UseAdamAndAdagrad(&spec, dense_learning_rate, sparse_learning_rate);
  for (int t = 0; t < tables; ++t) {
    proto::TableSpec* table = spec.add_tables();
    table->set_name(absl::StrCat("C", t + 1));
    table->set_dim(dim);
  }
  proto::DataSpec* data = spec.mutable_data();
  data->set_format(proto::DATA_FORMAT_GENERATED);
  data->mutable_generator()->set_rows(rows);
  data->mutable_generator()->set_seed(data_seed);
  data->mutable_generator()->set_cardinality_scale(cardinality_scale);
  data->set_eval_fraction(eval_fraction);
  data->set_shuffle_buffer(shuffle_buffer);
  spec.mutable_scheduling()->set_policy(policy);
  spec.mutable_scheduling()->set_cache_fraction(cache_fraction);
  spec.set_global_batch_size(global_batch_size);
  if (iterations > 0) spec.set_iterations(iterations);
  if (epochs > 0) spec.set_epochs(epochs);
  spec.set_num_workers(workers);
  return spec;
}

proto::JobSpec SmallWideAndDeepJob(const std::string& name, proto::PolicyKind policy,
                                   uint64_t iterations) {
  GeneratedJob job;
  job.name = name;
  job.policy = policy;
  job.iterations = iterations;
  return job.Spec();
}

}  // namespace herald::testing
