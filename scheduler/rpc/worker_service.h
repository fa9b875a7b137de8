#pragma once
// gRPC WorkerService: a worker joins the running job, streams its steps
// (from its bounded queue, so the planner waits for slow workers) and
// reports each iteration.

#include <string>

#include "proto/scheduler.grpc.pb.h"
#include "scheduler/jobs/job_manager.h"

namespace herald::scheduler {

class WorkerServiceImpl final : public proto::WorkerService::Service {
 public:
  // Not owned. `token`: the cluster token every call must carry (empty: none).
  WorkerServiceImpl(JobManager* jobs, std::string token);

  // Waits up to 5 s for a job that includes the worker; NOT_FOUND if none.
  grpc::Status JoinJob(grpc::ServerContext* context, const proto::JoinJobRequest* request,
                       proto::JoinJobResponse* response) override;
  // Ends OK after the job's last step, or with the job's failure
  // (CANCELLED, ABORTED, UNAVAILABLE ...) so the worker abandons it.
  grpc::Status WorkerSteps(grpc::ServerContext* context, const proto::WorkerStepsRequest* request,
                           grpc::ServerWriter<proto::WorkerStep>* writer) override;
  grpc::Status ReportStep(grpc::ServerContext* context, const proto::StepReport* request,
                          proto::StepReportResponse* response) override;
  grpc::Status ReportEval(grpc::ServerContext* context, const proto::EvalReport* request,
                          proto::EvalReportResponse* response) override;
  // Chunks must be in order and cover [0, total_floats) exactly.
  grpc::Status UploadDense(grpc::ServerContext* context,
                           grpc::ServerReader<proto::DenseChunk>* reader,
                           proto::UploadDenseResponse* response) override;

 private:
  JobManager* jobs_;
  const std::string token_;
};

}  // namespace herald::scheduler
