#include "scheduler/jobs/testing/small_job.h"

namespace herald::scheduler::testing {

proto::JobSpec SmallJobSpec(uint64_t iterations, uint32_t num_workers) {
  proto::JobSpec spec;
  spec.set_name("small");
  spec.set_seed(2);
  spec.set_num_dense(13);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_dense_optimizer()->set_kind(proto::OPTIMIZER_SGD);
  spec.mutable_dense_optimizer()->set_learning_rate(0.1f);
  spec.mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_SGD);
  spec.mutable_sparse_optimizer()->set_learning_rate(0.1f);
  for (int t = 0; t < 26; ++t) spec.add_tables()->set_dim(2);
  spec.mutable_data()->set_format(proto::DATA_FORMAT_GENERATED);
  spec.mutable_data()->mutable_generator()->set_rows(2000);
  spec.mutable_data()->mutable_generator()->set_cardinality_scale(0.001);
  spec.mutable_scheduling()->set_policy(proto::POLICY_HERALD);
  spec.mutable_scheduling()->set_cache_fraction(0.2f);
  spec.set_global_batch_size(32);
  spec.set_iterations(iterations);
  spec.set_num_workers(num_workers);
  return spec;
}

}  // namespace herald::scheduler::testing
