#include "tests/harness/small_job.h"

#include "absl/strings/str_cat.h"
#include "common/testing/job_spec_testing.h"

namespace herald::testing {

proto::JobSpec SmallWideAndDeepJob(const std::string& name, proto::PolicyKind policy,
                                   uint64_t iterations) {
  proto::JobSpec spec;
  spec.set_name(name);
  spec.set_seed(5);
  spec.set_num_dense(13);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_model()->add_top_mlp(8);
  herald::testing::UseAdamAndAdagrad(&spec, 0.01f, 0.05f);
  for (int t = 0; t < 26; ++t) {
    auto* table = spec.add_tables();
    table->set_name(absl::StrCat("C", t + 1));
    table->set_dim(4);
  }
  proto::DataSpec* data = spec.mutable_data();
  data->set_format(proto::DATA_FORMAT_GENERATED);
  data->mutable_generator()->set_rows(4000);
  data->mutable_generator()->set_seed(9);
  data->mutable_generator()->set_cardinality_scale(0.002);
  data->set_eval_fraction(0.1f);
  data->set_shuffle_buffer(256);
  spec.mutable_scheduling()->set_policy(policy);
  spec.mutable_scheduling()->set_cache_fraction(0.2f);
  spec.set_global_batch_size(64);
  spec.set_iterations(iterations);
  spec.set_num_workers(2);
  return spec;
}

}  // namespace herald::testing
