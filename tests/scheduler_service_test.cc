// The scheduler's gRPC services in this process on loopback, one real PS
// shard (PsService) on another port, and fake workers: plain gRPC clients
// that register, join, read their step streams and report.

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "checkpoint/manifest.h"
#include "cluster/dense_upload.h"
#include "common/rpc/channel.h"
#include "common/rpc/server.h"
#include "common/version.h"
#include "gtest/gtest.h"
#include "plan/step_codec.h"
#include "ps_server/client/sharded_ps_client.h"
#include "ps_server/service/ps_core.h"
#include "ps_server/service/ps_service.h"
#include "scheduler/jobs/job_manager.h"
#include "scheduler/jobs/model_export.h"
#include "scheduler/jobs/testing/small_job.h"
#include "scheduler/rpc/coordinator_service.h"
#include "scheduler/rpc/job_service.h"
#include "scheduler/rpc/worker_service.h"

namespace herald::scheduler {
namespace {

constexpr size_t kQueue = 3;
const std::vector<float> kDense = {0.5f, -1.0f, 2.0f, 3.5f, 4.0f, 5.0f, -6.25f, 7.0f, 8.0f, 9.0f};

proto::JobSpec Spec(uint64_t iterations) { return testing::SmallJobSpec(iterations); }

class SchedulerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    JobManagerOptions options;
    options.run.step_queue_capacity = kQueue;
    options.poll = absl::Milliseconds(20);
    options.run.poll = absl::Milliseconds(20);
    jobs_ = std::make_unique<JobManager>(&registry_, &kv_, options);
    coordinator_ = std::make_unique<CoordinatorService>(&registry_, &kv_, "", 1000);
    job_service_ = std::make_unique<JobServiceImpl>(jobs_.get(), &registry_, "");
    worker_service_ = std::make_unique<WorkerServiceImpl>(jobs_.get(), "");
    auto server =
        rpc::StartServer({}, {coordinator_.get(), job_service_.get(), worker_service_.get()});
    ASSERT_TRUE(server.ok());
    server_ = std::move(*server);
    auto ps_server = rpc::StartServer({}, {&ps_service_});
    ASSERT_TRUE(ps_server.ok());
    ps_server_ = std::move(*ps_server);
    auto channel = rpc::MakeChannel(server_->address(), {});
    ASSERT_TRUE(channel.ok());
    coordinator_stub_ = proto::Coordinator::NewStub(*channel);
    jobs_stub_ = proto::JobService::NewStub(*channel);
    workers_stub_ = proto::WorkerService::NewStub(*channel);
    ASSERT_FALSE(Register(proto::NODE_ROLE_PS, ps_server_->address()).empty());
    for (int w = 0; w < 2; ++w) {
      address_.push_back("127.0.0.1:" + std::to_string(9000 + w));
      node_.push_back(Register(proto::NODE_ROLE_WORKER, address_.back()));
    }
  }
  void TearDown() override {
    jobs_.reset();
    server_->Shutdown();
  }

  std::string Register(proto::NodeRole role, const std::string& address) {
    proto::RegisterResponse response;
    EXPECT_TRUE(RegisterAs(role, address, kWireVersion, "", &response).ok());
    return response.node_id();
  }

  // Registers a node of this or another release (`wire_version`, `version`).
  grpc::Status RegisterAs(proto::NodeRole role, const std::string& address, uint32_t wire_version,
                          const std::string& version, proto::RegisterResponse* response) {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, 5000);
    proto::RegisterRequest request;
    request.set_role(role);
    request.set_address(address);
    request.set_requested_rank(-1);
    request.set_wire_version(wire_version);
    request.set_version(version);
    return coordinator_stub_->Register(&context, request, response);
  }

  std::string Submit(const proto::JobSpec& spec) {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, 5000);
    proto::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    proto::SubmitJobResponse response;
    EXPECT_TRUE(jobs_stub_->SubmitJob(&context, request, &response).ok());
    return response.job_id();
  }

  // One JoinJob call as node `node` from `address`.
  grpc::Status JoinAs(const std::string& node, const std::string& address,
                      proto::JoinJobResponse* response) {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, 15000);
    proto::JoinJobRequest request;
    request.set_node_id(node);
    request.set_address(address);
    return workers_stub_->JoinJob(&context, request, response);
  }

  proto::JoinJobResponse Join(int w) {
    for (int attempt = 0; attempt < 20; ++attempt) {
      proto::JoinJobResponse response;
      if (JoinAs(node_[w], address_[w], &response).ok()) return response;
    }
    ADD_FAILURE() << "worker " << w << " never joined";
    return {};
  }

  // Waits (bounded) for the job to leave QUEUED/RUNNING.
  proto::JobStatus WaitForEnd(const std::string& job) {
    uint64_t version = 0;
    proto::JobStatus s = *jobs_->WaitForUpdate(job, &version, absl::ZeroDuration());
    for (int i = 0; i < 300 && !JobManager::IsTerminal(s.state()); ++i) {
      s = *jobs_->WaitForUpdate(job, &version, absl::Milliseconds(100));
    }
    return s;
  }

  proto::JobStatus Status(const std::string& job) {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, 5000);
    proto::JobStatusRequest request;
    request.set_job_id(job);
    proto::JobStatusResponse response;
    EXPECT_TRUE(jobs_stub_->GetJobStatus(&context, request, &response).ok());
    return response.jobs_size() == 1 ? response.jobs(0) : proto::JobStatus();
  }

  grpc::Status Export(const std::string& job, const std::string& dir,
                      proto::ExportJobResponse* response) {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, 30000);
    proto::ExportJobRequest request;
    request.set_job_id(job);
    request.set_out_dir(dir);
    return jobs_stub_->ExportJob(&context, request, response);
  }

  // Opens worker w's step stream for the run it joined, with a deadline.
  std::unique_ptr<grpc::ClientReader<proto::WorkerStep>> OpenSteps(
      grpc::ClientContext* context, int w, const proto::JoinJobResponse& join, int64_t timeout_ms) {
    rpc::SetDeadline(context, timeout_ms);
    proto::WorkerStepsRequest request;
    request.set_node_id(node_[w]);
    request.set_job_id(join.job_id());
    request.set_run_id(join.run_id());
    return workers_stub_->WorkerSteps(context, request);
  }

  // Reads worker w's whole stream, checking and reporting each step (and
  // reporting it done to the PS shard, which commits it). At the last step
  // rank 0 uploads `kDense` and every worker reports the CRC of
  // `dense` (kDense unless a test makes the replicas differ). The stream
  // must end OK, unless `may_fail_with` is given: then the job may fail
  // before this stream's end (the last report is the other worker's), and
  // the stream may end with that failure, whose message holds it.
  uint64_t FakeWorker(int w, const proto::JoinJobResponse& join,
                      const std::vector<float>& dense = kDense,
                      const std::string& may_fail_with = "") {
    grpc::ClientContext context;
    auto reader = OpenSteps(&context, w, join, 60000);
    ps::PsClientOptions ps_options;
    ps_options.run_id = join.run_id();
    auto ps = ps::MakeGrpcPsClient({ps_server_->address()}, ps_options);
    EXPECT_TRUE(ps.ok());
    proto::WorkerStep step;
    uint64_t received = 0;
    while (reader->Read(&step)) {
      EXPECT_EQ(step.iteration(), received);
      auto decoded = plan::DecodeWorkerStep(step, 26, 13);
      EXPECT_TRUE(decoded.ok()) << decoded.status();
      samples_[w] += step.samples().num_samples();
      // Real workers cannot get ahead of each other (the dense all-reduce
      // joins them every iteration) and the PS shard refuses iterations too
      // far ahead; fake workers wait for each other like the all-reduce.
      WaitForOtherWorker(w, step.iteration());
      EXPECT_TRUE((*ps)
                      ->IterationDone(join.job_id(), Iteration(step.iteration()),
                                      WorkerRank(join.rank()), 2)
                      .ok());
      {
        absl::MutexLock lock(&pace_mu_);
        iterations_done_[w] = step.iteration() + 1;
      }
      proto::StepReport report;
      if (step.last()) {
        if (join.rank() == 0) {
          // Chunks of 3 floats: the upload is reassembled in order.
          EXPECT_TRUE(cluster::UploadDense(workers_stub_.get(), "", node_[w], join.job_id(),
                                           join.run_id(), kDense, 3)
                          .ok());
        }
        report.set_dense_crc32(cluster::DenseCrc32(dense));
      }
      grpc::ClientContext report_context;
      rpc::SetDeadline(&report_context, 5000);
      report.set_node_id(node_[w]);
      report.set_job_id(join.job_id());
      report.set_run_id(join.run_id());
      report.set_iteration(step.iteration());
      report.set_loss_sum(1.0 + w);
      proto::StepReportResponse response;
      EXPECT_TRUE(workers_stub_->ReportStep(&report_context, report, &response).ok());
      ++received;
      last_[w] = step.last();
    }
    const grpc::Status end = reader->Finish();
    if (may_fail_with.empty() || end.ok()) {
      EXPECT_TRUE(end.ok()) << end.error_message();
    } else {
      EXPECT_NE(end.error_message().find(may_fail_with), std::string::npos) << end.error_message();
    }
    return received;
  }

  // Waits (up to 30 s) until the other fake worker reported iteration - 1.
  void WaitForOtherWorker(int w, uint64_t iteration) {
    absl::MutexLock lock(&pace_mu_);
    std::pair<const uint64_t*, uint64_t> wait(&iterations_done_[1 - w], iteration);
    auto reached = +[](std::pair<const uint64_t*, uint64_t>* p) { return *p->first >= p->second; };
    pace_mu_.AwaitWithTimeout(absl::Condition(reached, &wait), absl::Seconds(30));
  }

  // Fake workers do not heartbeat; liveness is membership_test's subject.
  NodeRegistry registry_{absl::Hours(1)};
  KvRendezvous kv_;
  ps::PsCore ps_core_{ps::PsCoreOptions{}};
  ps::PsService ps_service_{&ps_core_};
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<CoordinatorService> coordinator_;
  std::unique_ptr<JobServiceImpl> job_service_;
  std::unique_ptr<WorkerServiceImpl> worker_service_;
  std::unique_ptr<rpc::RunningServer> server_, ps_server_;
  std::unique_ptr<proto::Coordinator::Stub> coordinator_stub_;
  std::unique_ptr<proto::JobService::Stub> jobs_stub_;
  std::unique_ptr<proto::WorkerService::Stub> workers_stub_;
  std::vector<std::string> node_;
  std::vector<std::string> address_;  // each worker's registered address
  uint64_t samples_[2] = {0, 0};
  bool last_[2] = {false, false};
  absl::Mutex pace_mu_;
  uint64_t iterations_done_[2] ABSL_GUARDED_BY(pace_mu_) = {0, 0};
};

// A node of another release is refused with both releases named; one of
// this release learns the scheduler's.
TEST_F(SchedulerServiceTest, ANodeSpeakingAnotherWireVersionIsRefusedNamingBothVersions) {
  for (const uint32_t wire : {0u, kWireVersion + 1}) {
    proto::RegisterResponse response;
    const grpc::Status s = RegisterAs(proto::NODE_ROLE_WORKER, "127.0.0.1:1", wire,
                                      wire == 0 ? "" : "9.9.9 (commit future)", &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(s.error_message().find(absl::StrCat("wire version ", wire)), std::string::npos)
        << s.error_message();
    EXPECT_NE(s.error_message().find(wire == 0 ? "older than 0.29.0" : "9.9.9 (commit future)"),
              std::string::npos)
        << s.error_message();
    EXPECT_NE(s.error_message().find(absl::StrCat("this scheduler is herald ", Version())),
              std::string::npos)
        << s.error_message();
  }
  proto::RegisterResponse response;
  ASSERT_TRUE(RegisterAs(proto::NODE_ROLE_WORKER, "127.0.0.1:2", kWireVersion, "", &response).ok());
  EXPECT_EQ(response.wire_version(), kWireVersion);
  EXPECT_NE(response.version().find(Version()), std::string::npos);
}

TEST_F(SchedulerServiceTest, AHeartbeatIsKnownOnlyFromTheAddressItsIdWasRegisteredAt) {
  // Node ids start again with a restarted scheduler: a node still using
  // the id another node was given since must be told to register again.
  auto beat = [&](const std::string& node, const std::string& address) {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, 5000);
    proto::HeartbeatRequest request;
    request.set_node_id(node);
    request.set_address(address);
    proto::HeartbeatResponse response;
    EXPECT_TRUE(coordinator_stub_->Heartbeat(&context, request, &response).ok());
    return response.known();
  };
  EXPECT_TRUE(beat(node_[0], address_[0]));
  EXPECT_FALSE(beat(node_[0], address_[1]));  // worker 1 with worker 0's id
  EXPECT_FALSE(beat("worker-9-99", address_[0]));
}

TEST_F(SchedulerServiceTest, FakeWorkersReceiveEveryStepInOrderAndTheJobSucceeds) {
  const std::string job = Submit(Spec(10));
  // A process asking under worker 0's id from another address (an id it
  // held before a scheduler restart) does not take worker 0's place.
  {
    proto::JoinJobResponse response;
    const grpc::Status stale = JoinAs(node_[0], address_[1], &response);
    EXPECT_EQ(stale.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(stale.error_message().find("a node id from before a scheduler restart"),
              std::string::npos)
        << stale.error_message();
  }
  proto::JoinJobResponse joins[2] = {Join(0), Join(1)};
  EXPECT_EQ(joins[0].rank() + joins[1].rank(), 1u);
  EXPECT_EQ(joins[0].table_slots_size(), 26);
  // A worker joins once.
  {
    proto::JoinJobResponse response;
    EXPECT_FALSE(JoinAs(node_[0], address_[0], &response).ok());
  }
  // One run, and its rendezvous scope is its own.
  EXPECT_NE(joins[0].run_id(), 0u);
  EXPECT_EQ(joins[0].run_id(), joins[1].run_id());
  EXPECT_EQ(joins[0].rendezvous_scope(), absl::StrCat(job, "/run-", joins[0].run_id()));
  // A worker still ending an earlier run of this job: its error report, its
  // step stream and its PS requests are refused and change nothing (the
  // job still succeeds below, every step reaching this run's workers).
  {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, 5000);
    proto::StepReport stale;
    stale.set_node_id(node_[1]);
    stale.set_job_id(job);
    stale.set_run_id(joins[1].run_id() + 1);
    stale.set_error("an earlier run's worker lost its scheduler");
    proto::StepReportResponse response;
    const grpc::Status refused = workers_stub_->ReportStep(&context, stale, &response);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(refused.error_message().find("an earlier one, and is ignored"), std::string::npos)
        << refused.error_message();
    proto::JoinJobResponse earlier = joins[0];
    earlier.set_run_id(joins[0].run_id() + 1);
    grpc::ClientContext stream_context;
    auto reader = OpenSteps(&stream_context, 0, earlier, 5000);
    proto::WorkerStep step;
    EXPECT_FALSE(reader->Read(&step));
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    ps::PsClientOptions stale_ps;
    stale_ps.run_id = joins[0].run_id() + 1;
    auto ps = ps::MakeGrpcPsClient({ps_server_->address()}, stale_ps);
    ASSERT_TRUE(ps.ok());
    const absl::Status done = (*ps)->IterationDone(job, Iteration(0), WorkerRank(0), 2).status();
    EXPECT_EQ(done.code(), absl::StatusCode::kFailedPrecondition) << done;
  }
  uint64_t received[2];
  std::thread other([&] { received[1] = FakeWorker(1, joins[1]); });
  received[0] = FakeWorker(0, joins[0]);
  other.join();
  EXPECT_EQ(received[0], 10u);
  EXPECT_EQ(received[1], 10u);
  EXPECT_EQ(samples_[0] + samples_[1], 10u * 32);
  EXPECT_TRUE(last_[0] && last_[1]);
  proto::JobStatus s = WaitForEnd(job);
  EXPECT_EQ(s.state(), proto::JOB_SUCCEEDED) << s.reason();
  EXPECT_EQ(s.progress().iteration(), 10u);
  EXPECT_DOUBLE_EQ(s.progress().loss(), 3.0 / 32);  // (1 + 2) / global batch

  // Export: the uploaded dense parameters and every shard's rows.
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/export";
  proto::ExportJobResponse exported;
  ASSERT_TRUE(Export(job, dir, &exported).ok());
  EXPECT_EQ(exported.manifest_path(), dir + "/MODEL");
  EXPECT_EQ(exported.dense_floats(), kDense.size());
  std::ifstream dense_file(dir + "/dense.f32", std::ios::binary);
  std::vector<float> dense(kDense.size() + 1);
  dense_file.read(reinterpret_cast<char*>(dense.data()), (kDense.size() + 1) * sizeof(float));
  EXPECT_EQ(static_cast<size_t>(dense_file.gcount()), kDense.size() * sizeof(float));
  dense.resize(kDense.size());
  EXPECT_EQ(dense, kDense);
  auto manifest = checkpoint::FindLatestManifest(dir, job);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(checkpoint::ReadManifest(*manifest)->iteration(), 9u);
  // Never over an existing export; never a relative path; never a job that
  // did not succeed.
  grpc::Status again = Export(job, dir, &exported);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS) << again.error_message();
  grpc::Status relative = Export(job, "relative/dir", &exported);
  EXPECT_EQ(relative.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(relative.error_message().find("out_dir"), std::string::npos);
  EXPECT_EQ(Export("job-999", dir + "2", &exported).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SchedulerServiceTest, ReplicasWhoseDenseParametersDifferFailTheJob) {
  const std::string job = Submit(Spec(4));
  proto::JoinJobResponse joins[2] = {Join(0), Join(1)};
  std::vector<float> diverged = kDense;
  diverged[3] += 1e-6f;
  const int rank1 = joins[0].rank() == 1 ? 0 : 1;  // which fake worker has rank 1
  // Whichever report comes last fails the job; the other worker's stream
  // may still be open then and end with the failure.
  const std::string failure = "dense replicas differ";
  std::thread other([&] { FakeWorker(rank1, joins[rank1], diverged, failure); });
  FakeWorker(1 - rank1, joins[1 - rank1], kDense, failure);
  other.join();
  proto::JobStatus s = WaitForEnd(job);
  EXPECT_EQ(s.state(), proto::JOB_FAILED);
  EXPECT_NE(s.reason().find("dense replicas differ"), std::string::npos) << s.reason();
  proto::ExportJobResponse exported;
  EXPECT_EQ(Export(job, "/tmp/never", &exported).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(SchedulerServiceTest, ASlowWorkerHoldsThePlannerAtItsQueueBound) {
  const std::string job = Submit(Spec(50));
  proto::JoinJobResponse join0 = Join(0), join1 = Join(1);
  // Worker 0 reads without reporting, worker 1 reads nothing: the planner
  // stops once worker 1's queue holds kQueue steps.
  grpc::ClientContext context;
  auto reader = OpenSteps(&context, 0, join0, 2000);
  proto::WorkerStep step;
  uint64_t read = 0;
  while (reader->Read(&step)) ++read;  // ends at the 2 s deadline
  // Iteration kQueue went to worker 0 before the push to worker 1 blocked.
  EXPECT_EQ(read, kQueue + 1);
  EXPECT_EQ(Status(job).progress().iterations_planned(), kQueue);
  // Worker 0's stream closed before the end: the job cannot go on exactly.
  proto::JobStatus s = WaitForEnd(job);
  EXPECT_EQ(s.state(), proto::JOB_FAILED);
  EXPECT_NE(s.reason().find("closed its step stream"), std::string::npos) << s.reason();
  (void)join1;
}

TEST_F(SchedulerServiceTest, AnErrorReportFailsTheJobAndTheOtherStreamEnds) {
  const std::string job = Submit(Spec(50));
  proto::JoinJobResponse join0 = Join(0), join1 = Join(1);
  grpc::ClientContext report_context;
  rpc::SetDeadline(&report_context, 5000);
  proto::StepReport report;
  report.set_node_id(node_[1]);
  report.set_job_id(join1.job_id());
  report.set_run_id(join1.run_id());
  report.set_error("device on fire");
  proto::StepReportResponse response;
  ASSERT_TRUE(workers_stub_->ReportStep(&report_context, report, &response).ok());
  grpc::ClientContext context;
  auto reader = OpenSteps(&context, 0, join0, 20000);
  proto::WorkerStep step;
  while (reader->Read(&step)) {
  }
  grpc::Status end = reader->Finish();
  EXPECT_EQ(end.error_code(), grpc::StatusCode::ABORTED) << end.error_message();
  EXPECT_NE(end.error_message().find("device on fire"), std::string::npos);
}

}  // namespace
}  // namespace herald::scheduler
