#include "scheduler/rpc/worker_service.h"

#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/rpc/cluster_token.h"
#include "common/rpc/status_convert.h"
#include "common/tunables.h"

namespace herald::scheduler {

WorkerServiceImpl::WorkerServiceImpl(JobManager* jobs, std::string token)
    : jobs_(jobs), token_(std::move(token)) {}

grpc::Status WorkerServiceImpl::JoinJob(grpc::ServerContext* context,
                                        const proto::JoinJobRequest* request,
                                        proto::JoinJobResponse* response) {
  if (auto s = rpc::CheckToken(context, token_, "JoinJob"); !s.ok()) return s;
  absl::StatusOr<proto::JoinJobResponse> r = jobs_->Join(request->node_id(), request->address(),
                                                         absl::Milliseconds(tunables::kJoinWaitMs));
  if (!r.ok()) return rpc::ToGrpcStatus(r.status());
  *response = std::move(*r);
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::WorkerSteps(grpc::ServerContext* context,
                                            const proto::WorkerStepsRequest* request,
                                            grpc::ServerWriter<proto::WorkerStep>* writer) {
  if (auto s = rpc::CheckToken(context, token_, "WorkerSteps"); !s.ok()) return s;
  auto run = jobs_->RunOfWorker(request->node_id());
  if (!run.ok()) return rpc::ToGrpcStatus(run.status());
  if ((*run)->job_id() != request->job_id() || (*run)->run_id() != request->run_id()) {
    return grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        absl::StrCat("steps of ", request->job_id(), " run ", request->run_id(),
                     ": the running job is ", (*run)->job_id(), " run ", (*run)->run_id()));
  }
  auto queue = (*run)->QueueOf(request->node_id());
  if (!queue.ok()) return rpc::ToGrpcStatus(queue.status());
  const absl::Duration poll = absl::Milliseconds(tunables::kSchedulerPollMs);
  while (!context->IsCancelled() && !(*queue)->finished_and_drained()) {
    auto step = (*queue)->Pop(poll);
    if (!step.ok()) return rpc::ToGrpcStatus(step.status());
    if (*step == nullptr) continue;
    if (!writer->Write(**step)) break;
  }
  if (!(*queue)->finished_and_drained()) {
    // A step may be lost with the stream: the job cannot go on exactly.
    (*run)->Abort(absl::UnavailableError(
        absl::StrCat(request->node_id(), " closed its step stream before the job's end")));
    return grpc::Status(grpc::StatusCode::CANCELLED, "step stream closed by the worker");
  }
  // Every step was sent. The stream stays open until the run ends, so the
  // worker reads the run's outcome as the stream's status: OK only when the
  // job succeeded, the failure otherwise (its calls in flight are then
  // called off). A worker that closes the stream now loses nothing.
  while (!context->IsCancelled()) {
    if (std::optional<absl::Status> outcome = (*run)->AwaitEnd(poll)) {
      return rpc::ToGrpcStatus(*outcome);
    }
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "step stream closed by the worker");
}

grpc::Status WorkerServiceImpl::ReportStep(grpc::ServerContext* context,
                                           const proto::StepReport* request,
                                           proto::StepReportResponse*) {
  if (auto s = rpc::CheckToken(context, token_, "ReportStep"); !s.ok()) return s;
  return rpc::ToGrpcStatus(jobs_->Report(*request));
}

grpc::Status WorkerServiceImpl::ReportEval(grpc::ServerContext* context,
                                           const proto::EvalReport* request,
                                           proto::EvalReportResponse*) {
  if (auto s = rpc::CheckToken(context, token_, "ReportEval"); !s.ok()) return s;
  return rpc::ToGrpcStatus(jobs_->ReportEval(*request));
}

grpc::Status WorkerServiceImpl::UploadDense(grpc::ServerContext* context,
                                            grpc::ServerReader<proto::DenseChunk>* reader,
                                            proto::UploadDenseResponse*) {
  if (auto s = rpc::CheckToken(context, token_, "UploadDense"); !s.ok()) return s;
  constexpr uint64_t kMaxFloats = uint64_t{1} << 32;  // 16 GiB
  proto::DenseChunk chunk;
  std::vector<float> values;
  std::string node_id, job_id;
  uint64_t total = 0;
  DenseUpload meta;  // checkpoint, iteration, state floats: as the first chunk says
  bool first = true;
  auto invalid = [](const std::string& what) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("UploadDense: ", what));
  };
  while (reader->Read(&chunk)) {
    if (first) {
      node_id = chunk.node_id();
      job_id = chunk.job_id();
      total = chunk.total_floats();
      meta.checkpoint = chunk.checkpoint();
      meta.iteration = chunk.iteration();
      meta.state_floats = chunk.state_floats();
      meta.run_id = chunk.run_id();
      if (meta.state_floats >= total) {
        return invalid(absl::StrCat("state_floats ", meta.state_floats, " leaves no parameters in ",
                                    total, " floats"));
      }
      if (total == 0 || total > kMaxFloats) {
        return invalid(absl::StrCat("total_floats ", total, " not in [1, 2^32]"));
      }
      if (!jobs_->RunOfWorker(node_id).ok()) {
        return invalid(absl::StrCat(node_id, " is not a worker of a running job"));
      }
      values.reserve(total);
      first = false;
    }
    if (chunk.node_id() != node_id || chunk.job_id() != job_id || chunk.total_floats() != total ||
        chunk.run_id() != meta.run_id) {
      return invalid("node_id, job_id, run_id and total_floats must be the same in every chunk");
    }
    if (chunk.offset() != values.size() || chunk.values().size() % sizeof(float) != 0 ||
        values.size() + chunk.values().size() / sizeof(float) > total) {
      return invalid(absl::StrCat("chunk at offset ", chunk.offset(), " with ",
                                  chunk.values().size(), " bytes does not continue ", values.size(),
                                  " of ", total, " floats"));
    }
    const size_t at = values.size();
    values.resize(at + chunk.values().size() / sizeof(float));
    std::memcpy(values.data() + at, chunk.values().data(), chunk.values().size());
  }
  if (first || values.size() != total) {
    return invalid(absl::StrCat("received ", values.size(), " of ", total, " floats"));
  }
  return rpc::ToGrpcStatus(jobs_->AcceptDense(node_id, job_id, std::move(values), meta));
}

}  // namespace herald::scheduler
