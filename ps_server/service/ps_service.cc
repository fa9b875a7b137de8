#include "ps_server/service/ps_service.h"

#include <chrono>

#include "common/rpc/status_convert.h"

namespace herald::ps {
namespace {

using rpc::ToGrpcStatus;

// The caller's deadline, or InfiniteFuture if it set none.
absl::Time DeadlineOf(const grpc::ServerContext* context) {
  const auto d = context->deadline();
  if (d == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(d);
}

}  // namespace

grpc::Status PsService::StartJob(grpc::ServerContext*, const proto::PsStartJobRequest* request,
                                 proto::PsStartJobResponse* response) {
  return ToGrpcStatus(core_->StartJob(*request, response));
}

grpc::Status PsService::EndJob(grpc::ServerContext*, const proto::PsEndJobRequest* request,
                               proto::PsEndJobResponse*) {
  return ToGrpcStatus(core_->EndJob(*request));
}

grpc::Status PsService::Fetch(grpc::ServerContext* context, const proto::FetchRequest* request,
                              proto::FetchResponse* response) {
  return ToGrpcStatus(core_->Fetch(*request, DeadlineOf(context), response));
}

grpc::Status PsService::PushGradients(grpc::ServerContext*,
                                      const proto::PushGradientsRequest* request,
                                      proto::PushGradientsResponse*) {
  return ToGrpcStatus(core_->PushGradients(*request));
}

grpc::Status PsService::WriteBack(grpc::ServerContext*, const proto::WriteBackRequest* request,
                                  proto::WriteBackResponse*) {
  return ToGrpcStatus(core_->WriteBack(*request));
}

grpc::Status PsService::IterationDone(grpc::ServerContext*,
                                      const proto::IterationDoneRequest* request,
                                      proto::IterationDoneResponse* response) {
  return ToGrpcStatus(core_->IterationDone(*request, response));
}

grpc::Status PsService::Checkpoint(grpc::ServerContext* context,
                                   const proto::CheckpointRequest* request,
                                   proto::CheckpointResponse* response) {
  return ToGrpcStatus(core_->Checkpoint(*request, DeadlineOf(context), response));
}

grpc::Status PsService::LookAhead(grpc::ServerContext*, const proto::LookAheadRequest* request,
                                  proto::LookAheadResponse*) {
  return ToGrpcStatus(core_->LookAhead(*request));
}

grpc::Status PsService::Stats(grpc::ServerContext*, const proto::PsStatsRequest* request,
                              proto::PsStatsResponse* response) {
  return ToGrpcStatus(core_->Stats(*request, response));
}

}  // namespace herald::ps
