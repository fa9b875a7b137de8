// JobRun against the real parameter-server code in this process
// (InProcessPsCluster) and scripted workers that take their steps from the
// run's queues: planning, reports, evaluations, checkpoints, export and the
// ways a run fails, without sockets or worker processes.

#include "scheduler/jobs/job_run.h"

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/manifest.h"
#include "common/crc32.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"
#include "ps_server/client/in_process_ps_cluster.h"
#include "scheduler/jobs/testing/small_job.h"

namespace herald::scheduler {
namespace {

constexpr uint32_t kWorkers = 2;
constexpr uint32_t kGlobalBatch = 32;

proto::JobSpec Spec(uint64_t iterations) { return testing::SmallJobSpec(iterations); }

// How a scripted worker behaves besides training correctly.
struct Script {
  int64_t error_at = -1;      // reports an error at this iteration
  bool wrong_crc = false;     // reports another dense CRC than rank 0's
  bool cancel_first = false;  // cancels the run on its first step
};

class JobRunTest : public ::testing::Test {
 protected:
  JobRunTest() : registry_(absl::Hours(1)), cluster_(2) {
    for (uint32_t s = 0; s < 2; ++s) ps_.push_back(Register(proto::NODE_ROLE_PS, 9000 + s));
    for (uint32_t w = 0; w < kWorkers; ++w) {
      workers_.push_back(Register(proto::NODE_ROLE_WORKER, 9100 + w));
    }
  }

  NodeInfo Register(proto::NodeRole role, int port) {
    proto::RegisterRequest request;
    request.set_role(role);
    request.set_address(absl::StrCat("127.0.0.1:", port));
    request.set_requested_rank(-1);
    absl::StatusOr<NodeInfo> node = registry_.Register(request);
    EXPECT_TRUE(node.ok()) << node.status();
    return *node;
  }

  std::unique_ptr<JobRun> MakeRun(const proto::JobSpec& spec) {
    JobRunOptions options;
    options.poll = absl::Milliseconds(20);
    options.step_queue_capacity = 2;
    options.make_ps_client = [this](const std::vector<std::string>& addresses,
                                    const ps::PsClientOptions& client_options)
        -> absl::StatusOr<std::unique_ptr<ps::PsClient>> {
      EXPECT_EQ(addresses.size(), 2u);
      return cluster_.NewClient(client_options);
    };
    return std::make_unique<JobRun>("job-1", spec, ps_, workers_, &registry_, options);
  }

  // Worker `w`: joins, then executes its steps until its queue ends: each
  // training step commits on the PS and is reported (loss_sum w + 1);
  // rank 0 uploads the dense parameters for checkpoints and at the end;
  // each evaluation step is answered with 0.25 for every sample.
  void RunWorker(JobRun* run, uint32_t w, Script script) {
    const std::string& node = workers_[w].node_id;
    absl::StatusOr<proto::JoinJobResponse> join = Join(run, node);
    if (!join.ok()) return;
    absl::StatusOr<StepQueue*> queue = run->QueueOf(node);
    ASSERT_TRUE(queue.ok());
    const std::vector<float> dense(10, 0.5f);
    const uint32_t crc = Crc32(dense.data(), dense.size() * sizeof(float));
    std::unique_ptr<ps::PsClient> ps = cluster_.NewClient();
    bool first = true;
    for (int polls = 0; polls < 5000; ++polls) {
      absl::StatusOr<std::shared_ptr<const proto::WorkerStep>> step =
          (*queue)->Pop(absl::Milliseconds(20));
      if (!step.ok()) return;  // the run failed
      if (*step == nullptr) {
        if ((*queue)->finished_and_drained()) return;
        continue;
      }
      if (first && script.cancel_first) run->Cancel("cancelled by the test");
      first = false;
      const proto::WorkerStep& s = **step;
      if (s.has_eval()) {
        proto::EvalReport report;
        report.set_node_id(node);
        report.set_iteration(s.iteration());
        report.set_index(s.eval().index());
        const std::vector<float> p(s.eval().num_samples(), 0.25f);
        report.set_predictions(p.data(), p.size() * sizeof(float));
        EXPECT_TRUE(run->ReportEval(report).ok());
        continue;
      }
      const absl::StatusOr<bool> done =
          ps->IterationDone("job-1", Iteration(s.iteration()), WorkerRank(w), kWorkers);
      if (!done.ok()) {
        // A run that failed drops the job from the shards while the other
        // worker may still hold queued steps: their commits fail and the
        // worker stops, as a real one would. Any other failed commit is a bug.
        ASSERT_TRUE(run->EndedOnPs()) << "iteration " << s.iteration() << ": " << done.status();
        return;
      }
      if (w == 0 && s.checkpoint()) {
        DenseUpload meta;
        meta.checkpoint = true;
        meta.iteration = s.iteration();
        ASSERT_TRUE(run->AcceptDense(node, dense, meta).ok());
      }
      if (w == 0 && s.last()) {
        ASSERT_TRUE(run->AcceptDense(node, dense).ok());
      }
      proto::StepReport report;
      report.set_node_id(node);
      report.set_iteration(s.iteration());
      report.set_loss_sum(w + 1.0);
      report.set_fetch_ms(1);
      report.set_dense_crc32(script.wrong_crc ? crc + 1 : crc);
      if (static_cast<int64_t>(s.iteration()) == script.error_at) report.set_error("device lost");
      ASSERT_TRUE(run->Report(report).ok());
    }
    ADD_FAILURE() << "worker " << w << " never saw its queue end";
  }

  static absl::StatusOr<proto::JoinJobResponse> Join(JobRun* run, const std::string& node) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      absl::StatusOr<proto::JoinJobResponse> join = run->Join(node, absl::Milliseconds(100));
      if (!absl::IsUnavailable(join.status())) return join;
    }
    return absl::DeadlineExceededError("never ready");
  }

  // Runs `run` with every worker scripted; returns Run()'s outcome.
  absl::Status RunWithWorkers(JobRun* run, std::vector<Script> scripts = {}) {
    scripts.resize(kWorkers);
    std::vector<std::thread> threads;
    for (uint32_t w = 0; w < kWorkers; ++w) {
      threads.emplace_back([this, run, w, script = scripts[w]] { RunWorker(run, w, script); });
    }
    const absl::Status outcome = run->Run();
    for (std::thread& t : threads) t.join();
    return outcome;
  }

  NodeRegistry registry_;
  ps::InProcessPsCluster cluster_;
  std::vector<NodeInfo> ps_, workers_;
};

TEST_F(JobRunTest, ARunPlansEveryIterationEvaluatesChecksPointsAndExports) {
  data::testing::TempDir temp;
  const std::string dir = temp.path();
  proto::JobSpec spec = Spec(6);
  spec.mutable_data()->set_eval_fraction(0.1f);
  spec.mutable_eval()->set_every_iterations(3);
  spec.mutable_eval()->set_max_samples(100);
  spec.mutable_checkpoint()->set_dir(dir + "/checkpoints");
  spec.mutable_checkpoint()->set_every_iterations(3);
  std::unique_ptr<JobRun> run = MakeRun(spec);
  ASSERT_TRUE(RunWithWorkers(run.get()).ok());
  EXPECT_EQ(run->AwaitEnd(absl::ZeroDuration()), absl::OkStatus());

  const proto::JobProgress p = run->Progress();
  EXPECT_EQ(p.iteration(), 6u);
  EXPECT_EQ(p.total_iterations(), 6u);
  EXPECT_EQ(p.iterations_planned(), 6u);
  EXPECT_DOUBLE_EQ(p.loss(), 3.0 / kGlobalBatch);  // (1 + 2) / global batch
  EXPECT_DOUBLE_EQ(p.worker_fetch_ms(), 12.0);     // 6 iterations × 2 workers × 1 ms
  // After iteration 2 (every 3) and at the end: 100 held-out samples each,
  // every prediction 0.25.
  EXPECT_EQ(p.evals_done(), 2u);
  EXPECT_EQ(p.eval_iteration(), 6u);
  EXPECT_EQ(p.eval_samples(), 100u);
  // The periodic checkpoint after iteration 2 (iteration 5 is the last: the
  // final one replaces it).
  EXPECT_EQ(p.checkpoints_written(), 2u);
  EXPECT_EQ(p.checkpoint_failures(), 0u);
  absl::StatusOr<proto::CheckpointManifest> last = checkpoint::ReadManifest(p.last_checkpoint());
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->iteration(), 5u);
  EXPECT_EQ(last->shards_size(), 2);
  // One history point per iteration, with the planned rows and each
  // worker's phases; their rows add up to the job's.
  const std::vector<proto::HistoryPoint> history = run->History();
  ASSERT_EQ(history.size(), 6u);
  uint64_t fetched = 0;
  for (const proto::HistoryPoint& point : history) {
    fetched += point.rows_fetched();
    ASSERT_EQ(point.workers_size(), 2);
    EXPECT_DOUBLE_EQ(point.workers(1).fetch_ms(), 1.0);
  }
  EXPECT_EQ(fetched, p.rows_fetched());
  EXPECT_GT(fetched, 0u);
  EXPECT_EQ(run->Losses().size(), 6u);

  absl::StatusOr<proto::ExportJobResponse> exported = run->Export(dir + "/export");
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ(exported->dense_floats(), 10u);
  EXPECT_TRUE(std::filesystem::exists(exported->manifest_path()));
  EXPECT_FALSE(run->PsStats().empty());
  run->EndOnPs();
  EXPECT_TRUE(run->EndedOnPs());
  EXPECT_TRUE(absl::IsFailedPrecondition(run->Export(dir + "/export2").status()));
  EXPECT_TRUE(run->PsStats().empty());
}

TEST_F(JobRunTest, AnErrorReportFailsTheRunNamingTheWorkerAndIteration) {
  std::unique_ptr<JobRun> run = MakeRun(Spec(6));
  Script failing;
  failing.error_at = 1;
  const absl::Status outcome = RunWithWorkers(run.get(), {{}, failing});
  EXPECT_TRUE(absl::IsAborted(outcome)) << outcome;
  EXPECT_NE(outcome.message().find("worker 1"), std::string::npos) << outcome;
  EXPECT_NE(outcome.message().find("iteration 1: device lost"), std::string::npos) << outcome;
  EXPECT_TRUE(run->EndedOnPs());  // a failed run frees the shards
}

TEST_F(JobRunTest, DenseReplicasThatDifferFailTheRunAsDataLoss) {
  std::unique_ptr<JobRun> run = MakeRun(Spec(3));
  Script drifting;
  drifting.wrong_crc = true;
  const absl::Status outcome = RunWithWorkers(run.get(), {{}, drifting});
  EXPECT_TRUE(absl::IsDataLoss(outcome)) << outcome;
  EXPECT_NE(outcome.message().find("worker 1"), std::string::npos) << outcome;
}

TEST_F(JobRunTest, CancelEndsTheRunWithItsReasonAndRefusesLaterJoins) {
  std::unique_ptr<JobRun> run = MakeRun(Spec(50));
  Script cancelling;
  cancelling.cancel_first = true;
  const absl::Status outcome = RunWithWorkers(run.get(), {cancelling, {}});
  EXPECT_TRUE(absl::IsCancelled(outcome)) << outcome;
  EXPECT_EQ(outcome.message(), "cancelled by the test");
  EXPECT_LT(run->Progress().iteration(), 50u);
  EXPECT_TRUE(absl::IsNotFound(run->QueueOf("no-such-node").status()));
  EXPECT_TRUE(absl::IsCancelled(run->Join(workers_[0].node_id, absl::ZeroDuration()).status()));
}

}  // namespace
}  // namespace herald::scheduler
