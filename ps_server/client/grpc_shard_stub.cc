#include "ps_server/client/grpc_shard_stub.h"

#include "absl/strings/str_cat.h"
#include "common/rpc/status_convert.h"
#include "proto/ps.grpc.pb.h"

namespace herald::ps {
namespace {

class GrpcShardStub final : public ShardStub {
 public:
  GrpcShardStub(std::string address, std::shared_ptr<grpc::Channel> channel)
      : address_(std::move(address)), stub_(proto::ParameterServer::NewStub(channel)) {}
  std::string name() const override { return address_; }

  absl::Status StartJob(const proto::PsStartJobRequest& r, proto::PsStartJobResponse* out,
                        absl::Duration timeout) override {
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->StartJob(c, r, out); });
  }
  absl::Status EndJob(const proto::PsEndJobRequest& r, absl::Duration timeout) override {
    proto::PsEndJobResponse out;
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->EndJob(c, r, &out); });
  }
  absl::Status Fetch(const proto::FetchRequest& r, proto::FetchResponse* out,
                     absl::Duration timeout) override {
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->Fetch(c, r, out); });
  }
  absl::Status PushGradients(const proto::PushGradientsRequest& r,
                             absl::Duration timeout) override {
    proto::PushGradientsResponse out;
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->PushGradients(c, r, &out); });
  }
  absl::Status WriteBack(const proto::WriteBackRequest& r, absl::Duration timeout) override {
    proto::WriteBackResponse out;
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->WriteBack(c, r, &out); });
  }
  absl::Status IterationDone(const proto::IterationDoneRequest& r,
                             proto::IterationDoneResponse* out, absl::Duration timeout) override {
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->IterationDone(c, r, out); });
  }
  absl::Status Checkpoint(const proto::CheckpointRequest& r, proto::CheckpointResponse* out,
                          absl::Duration timeout) override {
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->Checkpoint(c, r, out); });
  }
  absl::Status Stats(const proto::PsStatsRequest& r, proto::PsStatsResponse* out,
                     absl::Duration timeout) override {
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->Stats(c, r, out); });
  }

 private:
  template <typename Fn>
  absl::Status Call(absl::Duration timeout, Fn fn) {
    grpc::ClientContext context;
    rpc::SetDeadline(&context, absl::ToInt64Milliseconds(timeout));
    return rpc::FromGrpcStatus(fn(&context));
  }

  std::string address_;
  std::unique_ptr<proto::ParameterServer::Stub> stub_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ShardStub>> MakeGrpcShardStub(const std::string& address,
                                                             const rpc::ChannelOptions& options) {
  auto channel = rpc::MakeChannel(address, options);
  if (!channel.ok()) return channel.status();
  return std::unique_ptr<ShardStub>(new GrpcShardStub(address, *channel));
}

}  // namespace herald::ps
