// Training converges: a Wide&Deep job on generated data (labels from the
// generator's hidden teacher) trained by real processes under the herald
// policy reaches a held-out AUC within 0.02 of the teacher's own AUC on the
// same held-out samples (heraldctl export + heraldctl evaluate).

#include <string>

#include "absl/strings/str_cat.h"
#include "common/testing/job_spec_testing.h"
#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"

namespace herald {
namespace {

using testing::JsonNumber;

proto::JobSpec ConvergenceSpec() {
  proto::JobSpec spec;
  spec.set_name("convergence");
  spec.set_seed(21);
  spec.set_num_dense(13);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_model()->add_top_mlp(32);
  spec.mutable_model()->add_top_mlp(16);
  herald::testing::UseAdamAndAdagrad(&spec, 0.003f, 0.1f);
  for (int t = 0; t < 26; ++t) spec.add_tables()->set_dim(8);
  proto::DataSpec* data = spec.mutable_data();
  data->set_format(proto::DATA_FORMAT_GENERATED);
  data->mutable_generator()->set_rows(1000000);
  data->mutable_generator()->set_seed(17);
  data->mutable_generator()->set_cardinality_scale(0.0005);
  data->set_eval_fraction(0.1f);
  data->set_shuffle_buffer(8192);
  spec.mutable_scheduling()->set_policy(proto::POLICY_HERALD);
  spec.mutable_scheduling()->set_cache_fraction(0.1f);
  spec.set_global_batch_size(512);
  spec.set_epochs(2);
  spec.set_num_workers(2);
  return spec;
}

TEST(Convergence, HeldOutAucGetsWithin002OfTheTeacher) {
  auto cluster = testing::LocalCluster::Start("convergence", 2, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto job = (*cluster)->Submit(ConvergenceSpec());
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus done = (*cluster)->Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << (*cluster)->Logs();
  const std::string model = (*cluster)->dir() + "/model";
  ASSERT_TRUE((*cluster)->Export(*job, model).ok());

  testing::CommandResult eval =
      testing::RunHeraldctl((*cluster)->dir(), {"evaluate", "--model=" + model, "--json"});
  ASSERT_EQ(eval.code, 0) << eval.output;
  const double auc = JsonNumber(eval.output, "auc");
  const double teacher = JsonNumber(eval.output, "teacher_auc");
  std::printf("held-out AUC %.4f, teacher AUC %.4f, after %llu iterations\n", auc, teacher,
              static_cast<unsigned long long>(done.progress().iteration()));
  EXPECT_GT(teacher, 0.6) << eval.output;
  EXPECT_GE(auc, teacher - 0.02) << eval.output;
  EXPECT_LE(auc, teacher + 0.01) << eval.output;  // the teacher is the best there is
}

}  // namespace
}  // namespace herald
