#pragma once
// gRPC JobService: the job API heraldctl uses.

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "proto/scheduler.grpc.pb.h"
#include "scheduler/jobs/job_manager.h"
#include "scheduler/membership/node_registry.h"

namespace herald::scheduler {

class JobServiceImpl final : public proto::JobService::Service {
 public:
  // Not owned. `token`: the cluster token every call must carry (empty: none).
  JobServiceImpl(JobManager* jobs, const NodeRegistry* registry, std::string token);

  grpc::Status SubmitJob(grpc::ServerContext* context, const proto::SubmitJobRequest* request,
                         proto::SubmitJobResponse* response) override;
  grpc::Status GetJobStatus(grpc::ServerContext* context, const proto::JobStatusRequest* request,
                            proto::JobStatusResponse* response) override;
  // Streams the job's status whenever it changes (and at least every
  // second while it runs) until the job ends or the client goes away.
  grpc::Status WatchJob(grpc::ServerContext* context, const proto::WatchJobRequest* request,
                        grpc::ServerWriter<proto::JobStatus>* writer) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const proto::CancelJobRequest* request,
                         proto::CancelJobResponse* response) override;
  grpc::Status ExportJob(grpc::ServerContext* context, const proto::ExportJobRequest* request,
                         proto::ExportJobResponse* response) override;
  grpc::Status ListNodes(grpc::ServerContext* context, const proto::ListNodesRequest* request,
                         proto::ListNodesResponse* response) override;
  // Streams an export of a job this scheduler knows (export_files.h), file
  // by file in chunks of at most 1 MiB. Errors: NotFound (an unknown job,
  // no export), FailedPrecondition (the directory holds another job's
  // export), ListExportFiles's, DataLoss (a file cannot be read).
  grpc::Status DownloadExport(grpc::ServerContext* context,
                              const proto::DownloadExportRequest* request,
                              grpc::ServerWriter<proto::ExportChunk>* writer) override;

 private:
  JobManager* jobs_;
  const NodeRegistry* registry_;
  const std::string token_;
  absl::Mutex mu_;
  // The newest export ExportJob wrote per job, in this process.
  absl::flat_hash_map<std::string, std::string> last_export_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald::scheduler
