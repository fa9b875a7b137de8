#include "bench/wide_and_deep_bench_job.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "tests/harness/process.h"

namespace herald::bench {

proto::JobSpec WideAndDeepBenchJob(const std::string& name, const std::string& data, uint32_t dim,
                                   const std::string& policy, uint32_t workers,
                                   uint32_t global_batch) {
  proto::JobSpec spec;
  spec.set_name(name);
  spec.set_seed(1);
  spec.set_num_dense(13);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  for (int width : {512, 256, 128}) spec.mutable_model()->add_top_mlp(width);
  spec.mutable_dense_optimizer()->set_kind(proto::OPTIMIZER_ADAM);
  spec.mutable_dense_optimizer()->set_learning_rate(0.001f);
  spec.mutable_sparse_optimizer()->set_kind(proto::OPTIMIZER_ADAGRAD);
  spec.mutable_sparse_optimizer()->set_learning_rate(0.05f);
  for (int t = 0; t < 26; ++t) spec.add_tables()->set_dim(dim);
  spec.mutable_data()->set_format(proto::DATA_FORMAT_HERALD_BINARY);
  spec.mutable_data()->add_paths(data);
  spec.mutable_data()->set_shuffle_buffer(0);
  spec.mutable_scheduling()->set_policy(policy == "vanilla" ? proto::POLICY_VANILLA
                                                            : proto::POLICY_HERALD);
  spec.mutable_scheduling()->set_cache_fraction(0.1f);
  spec.set_global_batch_size(global_batch);
  spec.set_epochs(1);
  spec.set_num_workers(workers);
  return spec;
}

absl::StatusOr<std::string> GenerateBenchData(const std::string& dir_name, uint64_t rows) {
  const std::string path = testing::MakeTestDir(dir_name) + "/train.bin";
  const std::string command = absl::StrCat(
      testing::RunfilePath("cli/heraldctl"), " gen-data --rows ", rows,
      " --seed 1 --cardinality_scale 0.05 --format bin", " --out ", path, " > /dev/null");
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("generating the data failed: ", command));
  }
  return path;
}

}  // namespace herald::bench
