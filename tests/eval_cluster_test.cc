// Evaluation during a job (eval.*), with real processes: 2 herald_ps and 3
// herald_worker. A job evaluated every 4 iterations and at its end, with a
// periodic checkpoint at the same iterations:
//   - every evaluation is in the job's history and the last in its
//     progress, over eval.max_samples held-out samples;
//   - each equals, to the last bit, what `heraldctl evaluate` computes on
//     one CPU for that iteration's checkpoint (and for the export, at the
//     end): the workers' shares combine exactly;
//   - evaluating changes nothing: the exported model still equals the
//     single-process reference (read-only fetches create no row).
// And a spec asking for evaluations without held-out data is refused.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "checkpoint/manifest.h"
#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/local_cluster.h"
#include "tests/harness/reference_model.h"
#include "tests/harness/small_job.h"

namespace herald {
namespace {

using testing::JsonNumber;

constexpr uint64_t kIterations = 12;
constexpr uint32_t kEvalBatch = 500;
constexpr uint64_t kEvalSamples = 1700;  // 3 whole batches and a cut one

proto::JobSpec Spec() {
  testing::GeneratedJob job;
  job.name = "eval";
  job.model = proto::MODEL_DLRM;
  job.bottom_mlp = {8, 4};
  job.rows = 30000;  // about 3000 held out
  job.shuffle_buffer = 0;
  job.global_batch_size = 120;
  job.iterations = kIterations;
  job.workers = 3;
  proto::JobSpec spec = job.Spec();
  spec.mutable_eval()->set_every_iterations(4);
  spec.mutable_eval()->set_batch_size(kEvalBatch);
  spec.mutable_eval()->set_max_samples(kEvalSamples);
  return spec;
}

class EvalCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::LocalCluster::Start("eval", 2, 3);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  // `heraldctl evaluate` of `model` (an export or a checkpoint) with the
  // job's eval settings: its AUC and log loss.
  std::pair<double, double> Evaluate(const std::string& model) {
    const testing::CommandResult r = testing::RunHeraldctl(
        cluster_->dir(), {"evaluate", "--model=" + model, absl::StrCat("--batch=", kEvalBatch),
                          absl::StrCat("--max-samples=", kEvalSamples), "--json"});
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(JsonNumber(r.output, "samples"), static_cast<double>(kEvalSamples)) << r.output;
    return {JsonNumber(r.output, "auc"), JsonNumber(r.output, "logloss")};
  }

  std::unique_ptr<testing::LocalCluster> cluster_;
};

TEST_F(EvalCluster, EachEvaluationEqualsHeraldctlEvaluateOfItsIterationBitForBit) {
  proto::JobSpec spec = Spec();
  const std::string checkpoints = cluster_->dir() + "/checkpoints";
  spec.mutable_checkpoint()->set_dir(checkpoints);
  spec.mutable_checkpoint()->set_every_iterations(4);
  auto job = cluster_->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  const proto::JobStatus done = cluster_->Watch(*job);
  ASSERT_EQ(done.state(), proto::JOB_SUCCEEDED) << done.reason() << cluster_->Logs();
  auto status = cluster_->Status(*job, /*include_losses=*/false, /*include_history=*/true);
  ASSERT_TRUE(status.ok()) << status.status();

  // After iterations 3 and 7 (periodic) and 11 (the end, once).
  const proto::JobProgress& p = status->progress();
  EXPECT_EQ(p.evals_done(), 3u);
  EXPECT_EQ(p.eval_iteration(), kIterations);
  EXPECT_EQ(p.eval_samples(), kEvalSamples);
  EXPECT_GT(p.eval_ms(), 0);
  std::vector<proto::HistoryPoint> evals;
  for (const proto::HistoryPoint& point : status->history()) {
    if (point.has_eval_auc()) evals.push_back(point);
  }
  ASSERT_EQ(evals.size(), 3u);
  EXPECT_EQ(evals[0].iteration(), 3u);
  EXPECT_EQ(evals[1].iteration(), 7u);
  EXPECT_EQ(evals[2].iteration(), 11u);
  EXPECT_EQ(evals[2].eval_auc(), p.eval_auc());
  EXPECT_EQ(evals[2].eval_logloss(), p.eval_logloss());
  EXPECT_GT(p.eval_auc(), 0.5);  // it learned something; the numbers are real
  for (const proto::HistoryPoint& e : evals) {
    std::printf("after iteration %llu: held-out AUC %.17g, log loss %.17g\n",
                static_cast<unsigned long long>(e.iteration()), e.eval_auc(), e.eval_logloss());
  }
  std::printf("%u evaluations took %.1f ms of training time\n", p.evals_done(), p.eval_ms());

  for (int e = 0; e < 2; ++e) {
    SCOPED_TRACE(absl::StrCat("evaluation after iteration ", evals[e].iteration()));
    const auto [auc, logloss] =
        Evaluate(checkpoint::CheckpointIterationDir(checkpoints, *job, evals[e].iteration()));
    EXPECT_EQ(auc, evals[e].eval_auc());
    EXPECT_EQ(logloss, evals[e].eval_logloss());
  }
  const std::string exported = cluster_->dir() + "/export";
  ASSERT_TRUE(cluster_->Export(*job, exported).ok());
  const auto [auc, logloss] = Evaluate(exported);
  EXPECT_EQ(auc, p.eval_auc());
  EXPECT_EQ(logloss, p.eval_logloss());

  // The evaluations changed nothing the job trained.
  const testing::ReferenceModel ref = testing::TrainReference(spec);
  testing::ExpectExportEqualsReference(exported, ref, kIterations);
}

TEST_F(EvalCluster, EvaluationsWithoutHeldOutDataAreRefused) {
  proto::JobSpec spec = Spec();
  spec.mutable_data()->set_eval_fraction(0);
  auto job = cluster_->Submit(spec);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument) << job.status();
  EXPECT_NE(job.status().message().find("eval.every_iterations: 4 needs held-out samples"),
            std::string::npos)
      << job.status();
}

}  // namespace
}  // namespace herald
