// Training converges: a Wide&Deep job on generated data (labels from the
// generator's hidden teacher) trained by real processes under the herald
// policy reaches a held-out AUC within 0.02 of the teacher's own AUC on the
// same held-out samples (heraldctl export + heraldctl evaluate).

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

using testing::JsonNumber;

proto::JobSpec ConvergenceSpec() {
  testing::GeneratedJob job;
  job.name = "convergence";
  job.seed = 21;
  job.top_mlp = {32, 16};
  job.dense_learning_rate = 0.003f;
  job.sparse_learning_rate = 0.1f;
  job.dim = 8;
  job.rows = 1000000;
  job.data_seed = 17;
  job.cardinality_scale = 0.0005;
  job.shuffle_buffer = 8192;
  job.cache_fraction = 0.1f;
  job.global_batch_size = 512;
  job.epochs = 2;
  return job.Spec();
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
