#include "scheduler/rpc/job_service.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/version.h"
#include "scheduler/rpc/export_files.h"

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
  {
    absl::MutexLock lock(&mu_);
    last_export_[request->job_id()] = request->out_dir();
  }
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::DownloadExport(grpc::ServerContext* context,
                                            const proto::DownloadExportRequest* request,
                                            grpc::ServerWriter<proto::ExportChunk>* writer) {
  if (auto s = rpc::CheckToken(context, token_, "DownloadExport"); !s.ok()) return s;
  if (auto known = jobs_->Status(request->job_id(), {}); !known.ok() || known->empty()) {
    return rpc::ToGrpcStatus(absl::NotFoundError(absl::StrCat("no job ", request->job_id())));
  }
  std::string dir = request->dir();
  if (dir.empty()) {
    absl::MutexLock lock(&mu_);
    auto it = last_export_.find(request->job_id());
    if (it == last_export_.end()) {
      return rpc::ToGrpcStatus(
          absl::NotFoundError(absl::StrCat("this scheduler wrote no export of ", request->job_id(),
                                           " (since it started): name the export's directory")));
    }
    dir = it->second;
  }
  absl::StatusOr<ExportFiles> files = ListExportFiles(dir);
  if (!files.ok()) return rpc::ToGrpcStatus(files.status());
  if (files->model.job_id() != request->job_id()) {
    return rpc::ToGrpcStatus(absl::FailedPreconditionError(absl::StrCat(
        dir, " holds an export of ", files->model.job_id(), ", not of ", request->job_id())));
  }
  constexpr size_t kChunkBytes = 1 << 20;
  std::string buffer(kChunkBytes, '\0');
  bool first = true;
  for (const std::string& file : files->files) {
    const std::string path = dir + "/" + file;
    std::ifstream in(path, std::ios::binary);
    std::error_code error;
    const uint64_t size = std::filesystem::file_size(path, error);
    if (!in || error) {
      return rpc::ToGrpcStatus(absl::DataLossError(absl::StrCat(path, ": cannot be read")));
    }
    uint64_t offset = 0;
    do {
      in.read(buffer.data(),
              static_cast<std::streamsize>(std::min<uint64_t>(kChunkBytes, size - offset)));
      const size_t got = static_cast<size_t>(in.gcount());
      if (got == 0 && offset < size) {
        return rpc::ToGrpcStatus(
            absl::DataLossError(absl::StrCat(path, ": ended at byte ", offset, " of ", size)));
      }
      proto::ExportChunk chunk;
      if (first) chunk.set_dir(dir);
      first = false;
      chunk.set_file(file);
      chunk.set_file_bytes(size);
      chunk.set_offset(offset);
      chunk.set_data(buffer.data(), got);
      if (!writer->Write(chunk)) return grpc::Status::OK;  // the client went away
      offset += got;
    } while (offset < size);
  }
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
