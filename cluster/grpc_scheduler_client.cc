// SchedulerClient over gRPC (scheduler_client.h).

#include "absl/synchronization/mutex.h"
#include "cluster/dense_upload.h"
#include "cluster/scheduler_client.h"
#include "common/rpc/channel.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/tunables.h"
#include "proto/scheduler.grpc.pb.h"

namespace herald::cluster {
namespace {

// The scheduler holds JoinJob up to kJoinWaitMs; this leaves room for the network.
constexpr int64_t kJoinDeadlineMs = 3 * tunables::kJoinWaitMs;

class GrpcStepReader final : public StepReader {
 public:
  GrpcStepReader(proto::WorkerService::Stub* stub, const std::string& token,
                 const proto::WorkerStepsRequest& request) {
    rpc::AttachToken(&context_, token);
    reader_ = stub->WorkerSteps(&context_, request);
  }
  bool Read(proto::WorkerStep* step) override { return reader_->Read(step); }
  absl::Status Finish() override { return rpc::FromGrpcStatus(reader_->Finish()); }
  void Cancel() override { context_.TryCancel(); }

 private:
  grpc::ClientContext context_;  // before reader_: the reader uses it until destroyed
  std::unique_ptr<grpc::ClientReader<proto::WorkerStep>> reader_;
};

class GrpcSchedulerClient final : public SchedulerClient {
 public:
  GrpcSchedulerClient(std::shared_ptr<grpc::Channel> channel, std::string token)
      : stub_(proto::WorkerService::NewStub(channel)), token_(std::move(token)) {}

  absl::StatusOr<proto::JoinJobResponse> JoinJob(const proto::JoinJobRequest& request) override {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, kJoinDeadlineMs);
    rpc::AttachToken(&context, token_);
    proto::JoinJobResponse response;
    absl::Status s = rpc::FromGrpcStatus(stub_->JoinJob(&context, request, &response));
    if (!s.ok()) return s;
    return response;
  }
  std::unique_ptr<StepReader> OpenSteps(const proto::WorkerStepsRequest& request) override {
    return std::make_unique<GrpcStepReader>(stub_.get(), token_, request);
  }
  absl::Status ReportStep(const proto::StepReport& report) override {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, tunables::kReportDeadlineMs);
    rpc::AttachToken(&context, token_);
    proto::StepReportResponse response;
    return rpc::FromGrpcStatus(stub_->ReportStep(&context, report, &response));
  }
  absl::Status ReportEval(const proto::EvalReport& report) override {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, tunables::kReportDeadlineMs);
    rpc::AttachToken(&context, token_);
    proto::EvalReportResponse response;
    return rpc::FromGrpcStatus(stub_->ReportEval(&context, report, &response));
  }
  absl::Status UploadDense(const std::string& node_id, const std::string& job_id, uint64_t run_id,
                           const std::vector<float>& values) override {
    return cluster::UploadDense(stub_.get(), token_, node_id, job_id, run_id, values);
  }
  absl::Status UploadCheckpointDense(const std::string& node_id, const std::string& job_id,
                                     uint64_t run_id, uint64_t iteration,
                                     const std::vector<float>& values,
                                     const std::vector<float>& state) override {
    return cluster::UploadCheckpointDense(stub_.get(), token_, node_id, job_id, run_id, iteration,
                                          values, state);
  }

 private:
  std::unique_ptr<proto::WorkerService::Stub> stub_;
  const std::string token_;
};

}  // namespace

std::unique_ptr<SchedulerClient> MakeGrpcSchedulerClient(std::shared_ptr<grpc::Channel> channel,
                                                         std::string token) {
  return std::make_unique<GrpcSchedulerClient>(std::move(channel), std::move(token));
}

}  // namespace herald::cluster
