#pragma once
// The ParameterServer gRPC service: decodes nothing itself, forwards every
// call to PsCore with the caller's deadline, converts the status.

#include "proto/ps.grpc.pb.h"
#include "ps_server/service/ps_core.h"

namespace herald::ps {

class PsService final : public proto::ParameterServer::Service {
 public:
  explicit PsService(PsCore* core) : core_(core) {}

  grpc::Status StartJob(grpc::ServerContext*, const proto::PsStartJobRequest* request,
                        proto::PsStartJobResponse* response) override;
  grpc::Status EndJob(grpc::ServerContext*, const proto::PsEndJobRequest* request,
                      proto::PsEndJobResponse* response) override;
  grpc::Status Fetch(grpc::ServerContext* context, const proto::FetchRequest* request,
                     proto::FetchResponse* response) override;
  grpc::Status PushGradients(grpc::ServerContext*, const proto::PushGradientsRequest* request,
                             proto::PushGradientsResponse* response) override;
  grpc::Status WriteBack(grpc::ServerContext*, const proto::WriteBackRequest* request,
                         proto::WriteBackResponse* response) override;
  grpc::Status IterationDone(grpc::ServerContext*, const proto::IterationDoneRequest* request,
                             proto::IterationDoneResponse* response) override;
  grpc::Status Checkpoint(grpc::ServerContext* context, const proto::CheckpointRequest* request,
                          proto::CheckpointResponse* response) override;
  grpc::Status Stats(grpc::ServerContext*, const proto::PsStatsRequest* request,
                     proto::PsStatsResponse* response) override;
  grpc::Status LookAhead(grpc::ServerContext*, const proto::LookAheadRequest* request,
                         proto::LookAheadResponse* response) override;

 private:
  PsCore* core_;
};

}  // namespace herald::ps
