// A worker's JobSession driven by a scripted scheduler (FakeSchedulerClient)
// over the real PS code in this process: the planner's steps trained and
// reported in order with the reference model's losses, rank 0's uploads,
// evaluations, and how a session ends on a bad step, a failed stream and
// Stop().

#include "worker/runtime/job_session.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster/dense_upload.h"
#include "cluster/testing/fake_scheduler_client.h"
#include "common/testing/job_spec_testing.h"
#include "gtest/gtest.h"
#include "ps_server/client/in_process_ps_cluster.h"
#include "tests/planned_training.h"
#include "worker/collectives/kv_store.h"
#include "worker/device/cpu_device.h"
#include "worker/reference/reference_trainer.h"

namespace herald::scheduler {
namespace {

constexpr uint32_t kNumDense = 2;
constexpr uint32_t kTables = 3;
constexpr uint32_t kSlots = 40;
constexpr uint32_t kBatch = 18;
constexpr size_t kIterations = 5;

proto::JobSpec Spec() {
  proto::JobSpec spec;
  spec.set_name("session");
  spec.set_seed(11);
  spec.set_num_dense(kNumDense);
  spec.mutable_model()->set_kind(proto::MODEL_WIDE_AND_DEEP);
  spec.mutable_model()->add_top_mlp(8);
  herald::testing::UseAdamAndAdagrad(&spec, 0.01f, 0.05f);
  for (uint32_t t = 0; t < kTables; ++t) spec.add_tables()->set_dim(4);
  spec.set_global_batch_size(kBatch);
  return spec;
}

class JobSessionTest : public ::testing::Test {
 protected:
  JobSessionTest()
      : spec_(Spec()), batches_(SkewedBatches(kIterations, kBatch, kTables, kNumDense)) {
    EXPECT_TRUE(cluster_.client().StartJob(spec_.name(), spec_, 1).ok());
    PlannedRun run;
    run.capacity = 12;
    run.slots = kSlots;
    absl::StatusOr<std::vector<std::vector<proto::WorkerStep>>> planned =
        PlanWorkerSteps(spec_, batches_, run);
    EXPECT_TRUE(planned.ok()) << planned.status();
    for (const auto& iteration : *planned) steps_.push_back(iteration[0]);
  }

  proto::JoinJobResponse Join() const {
    proto::JoinJobResponse join;
    join.set_job_id(spec_.name());
    join.set_run_id(7);
    *join.mutable_spec() = spec_;
    join.set_rank(0);
    join.set_num_workers(1);
    for (uint32_t t = 0; t < kTables; ++t) join.add_table_slots(kSlots);
    return join;
  }

  worker::JobSessionConnectors Connectors() {
    worker::JobSessionConnectors connectors;
    connectors.connect_ps = [this](const proto::JoinJobResponse&) {
      return absl::StatusOr<worker::JobPsClient>(worker::JobPsClient{cluster_.NewClient(), false});
    };
    connectors.rendezvous = [](const proto::JoinJobResponse&) {
      return std::make_unique<worker::InProcessKvStore>();
    };
    return connectors;
  }

  std::unique_ptr<worker::JobSession> Session() {
    return std::make_unique<worker::JobSession>(Join(), "worker-0", &scheduler_, options_,
                                                Connectors());
  }

  const proto::JobSpec spec_;
  const std::vector<data::KeyBatch> batches_;
  ps::InProcessPsCluster cluster_{2};
  std::vector<proto::WorkerStep> steps_;
  cluster::testing::FakeSchedulerClient scheduler_;
  worker::WorkerAgentOptions options_;
};

TEST_F(JobSessionTest, TrainsEveryStepReportsTheReferenceLossesAndUploadsTheModel) {
  worker::CpuDevice device;
  auto reference = worker::ReferenceTrainer::Create(spec_, &device);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<double> losses;
  // Train returns the batch's loss sum, as a report carries it.
  for (const data::KeyBatch& b : batches_) losses.push_back(*(*reference)->Train(b));

  scheduler_.SetSteps(steps_, absl::OkStatus());
  ASSERT_TRUE(Session()->Run().ok());
  const std::vector<proto::StepReport> reports = scheduler_.reports();
  ASSERT_EQ(reports.size(), kIterations);
  for (size_t i = 0; i < kIterations; ++i) {
    EXPECT_EQ(reports[i].iteration(), i);
    EXPECT_EQ(reports[i].node_id(), "worker-0");
    EXPECT_EQ(reports[i].run_id(), 7u);
    EXPECT_TRUE(reports[i].error().empty()) << reports[i].error();
    EXPECT_EQ(reports[i].num_samples(), kBatch);
    EXPECT_NEAR(reports[i].loss_sum(), losses[i], 1e-5 * std::abs(losses[i])) << "iteration " << i;
  }
  // Rank 0 uploaded the trained parameters before its last report, whose
  // CRC is theirs; earlier reports carry none.
  const std::vector<float> uploaded = scheduler_.uploaded();
  ASSERT_FALSE(uploaded.empty());
  EXPECT_EQ(reports.back().dense_crc32(), cluster::DenseCrc32(uploaded));
  EXPECT_EQ(reports.front().dense_crc32(), 0u);
}

TEST_F(JobSessionTest, AStepOfTheWrongIterationIsReportedAsTheJobsError) {
  std::vector<proto::WorkerStep> steps = {steps_[0], steps_[2]};
  scheduler_.SetSteps(steps, absl::OkStatus());
  const absl::Status outcome = Session()->Run();
  EXPECT_TRUE(absl::IsInternal(outcome)) << outcome;
  const std::vector<proto::StepReport> reports = scheduler_.reports();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].error().empty());
  EXPECT_EQ(reports[1].iteration(), 1u);
  EXPECT_NE(reports[1].error().find("step for iteration 2, expected 1"), std::string::npos)
      << reports[1].error();
}

TEST_F(JobSessionTest, AStreamTheSchedulerEndsWithAnErrorEndsTheSessionWithIt) {
  scheduler_.SetSteps({steps_[0]}, absl::AbortedError("worker 1 failed"));
  const absl::Status outcome = Session()->Run();
  EXPECT_TRUE(absl::IsAborted(outcome)) << outcome;
  EXPECT_EQ(outcome.message(), "worker 1 failed");
  // The scheduler knows why already: the session reports only its step.
  ASSERT_EQ(scheduler_.reports().size(), 1u);
  EXPECT_TRUE(scheduler_.reports()[0].error().empty());
}

TEST_F(JobSessionTest, AStreamEndingOkBeforeTheLastStepIsAnError) {
  scheduler_.SetSteps({steps_[0], steps_[1]}, absl::OkStatus());
  const absl::Status outcome = Session()->Run();
  EXPECT_TRUE(absl::IsInternal(outcome)) << outcome;
  EXPECT_NE(outcome.message().find("before the last step"), std::string::npos) << outcome;
}

TEST_F(JobSessionTest, StopAbandonsTheNextIterationAndReportsWhy) {
  // The stream holds open after one step, as a scheduler waiting on
  // another worker; Stop() then abandons iteration 1.
  scheduler_.SetSteps({steps_[0]}, absl::OkStatus(), /*hold_open=*/true);
  std::unique_ptr<worker::JobSession> session = Session();
  absl::Status outcome;
  std::thread run([&] { outcome = session->Run(); });
  // Stop once the step's report arrived, or before: either way the
  // session ends Cancelled and says so.
  for (int polls = 0; polls < 2000 && scheduler_.reports().empty(); ++polls) {
    std::this_thread::yield();
  }
  session->Stop();
  run.join();
  EXPECT_TRUE(absl::IsCancelled(outcome)) << outcome;
  const std::vector<proto::StepReport> reports = scheduler_.reports();
  ASSERT_FALSE(reports.empty());
  EXPECT_NE(reports.back().error().find("shut"), std::string::npos) << reports.back().error();
}

}  // namespace
}  // namespace herald::scheduler
