#include "scheduler/rpc/job_service.h"

#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/version.h"

namespace herald::scheduler {

JobServiceImpl::JobServiceImpl(JobManager* jobs, const NodeRegistry* registry, std::string token)
    : jobs_(jobs), registry_(registry), token_(std::move(token)) {}

grpc::Status JobServiceImpl::SubmitJob(grpc::ServerContext* context,
                                       const proto::SubmitJobRequest* request,
                                       proto::SubmitJobResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "SubmitJob"); !s.ok()) return s;
  absl::StatusOr<std::string> id = jobs_->Submit(request->spec());
  if (!id.ok()) return rpc::ToGrpcStatus(id.status());
  response->set_job_id(*id);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::GetJobStatus(grpc::ServerContext* context,
                                          const proto::JobStatusRequest* request,
                                          proto::JobStatusResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "GetJobStatus"); !s.ok()) return s;
  auto jobs = jobs_->Status(
      request->job_id(),
      {request->include_losses(), request->include_history(), request->include_spec()});
  if (!jobs.ok()) return rpc::ToGrpcStatus(jobs.status());
  for (auto& j : *jobs) *response->add_jobs() = std::move(j);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::WatchJob(grpc::ServerContext* context,
                                      const proto::WatchJobRequest* request,
                                      grpc::ServerWriter<proto::JobStatus>* writer) {
  if (auto s = rpc::CheckToken(context, token_, "WatchJob"); !s.ok()) return s;
  uint64_t version = 0;
  std::string last_sent;
  while (!context->IsCancelled()) {
    absl::StatusOr<proto::JobStatus> status =
        jobs_->WaitForUpdate(request->job_id(), &version, absl::Seconds(1));
    if (!status.ok()) return rpc::ToGrpcStatus(status.status());
    std::string bytes = status->SerializeAsString();
    if (bytes != last_sent) {
      if (!writer->Write(*status)) return grpc::Status::OK;  // the client went away
      last_sent = std::move(bytes);
    }
    if (JobManager::IsTerminal(status->state())) return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled by the client");
}

grpc::Status JobServiceImpl::CancelJob(grpc::ServerContext* context,
                                       const proto::CancelJobRequest* request,
                                       proto::CancelJobResponse*) {
  if (auto s = rpc::CheckToken(context, token_, "CancelJob"); !s.ok()) return s;
  return rpc::ToGrpcStatus(jobs_->Cancel(request->job_id()));
}

grpc::Status JobServiceImpl::ExportJob(grpc::ServerContext* context,
                                       const proto::ExportJobRequest* request,
                                       proto::ExportJobResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "ExportJob"); !s.ok()) return s;
  if (!request->since().empty() && request->since()[0] != '/') {
    return rpc::ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("since: \"", request->since(), "\" is not an absolute path")));
  }
  absl::StatusOr<proto::ExportJobResponse> r =
      jobs_->Export(request->job_id(), request->out_dir(), request->since());
  if (!r.ok()) return rpc::ToGrpcStatus(r.status());
  *response = std::move(*r);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::ListNodes(grpc::ServerContext* context, const proto::ListNodesRequest*,
                                       proto::ListNodesResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "ListNodes"); !s.ok()) return s;
  for (auto& n : registry_->List()) *response->add_nodes() = std::move(n);
  response->set_wire_version(kWireVersion);
  response->set_version(Version());
  return grpc::Status::OK;
}

}  // namespace herald::scheduler
