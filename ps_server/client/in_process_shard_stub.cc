#include "ps_server/client/shard_stub.h"
#include "ps_server/service/ps_core.h"

namespace herald::ps {
namespace {

// Calls the core directly. Requests are still whole protos, so validation,
// routing checks and the BSP protocol are exactly those of herald_ps.
class InProcessShardStub final : public ShardStub {
 public:
  InProcessShardStub(PsCore* core, std::string name) : core_(core), name_(std::move(name)) {}
  std::string name() const override { return name_; }

  absl::Status StartJob(const proto::PsStartJobRequest& r, proto::PsStartJobResponse* out,
                        absl::Duration) override {
    return core_->StartJob(r, out);
  }
  absl::Status EndJob(const proto::PsEndJobRequest& r, absl::Duration) override {
    return core_->EndJob(r);
  }
  absl::Status Fetch(const proto::FetchRequest& r, proto::FetchResponse* out,
                     absl::Duration timeout) override {
    return core_->Fetch(r, absl::Now() + timeout, out);
  }
  absl::Status PushGradients(const proto::PushGradientsRequest& r, absl::Duration) override {
    return core_->PushGradients(r);
  }
  absl::Status WriteBack(const proto::WriteBackRequest& r, absl::Duration) override {
    return core_->WriteBack(r);
  }
  absl::Status IterationDone(const proto::IterationDoneRequest& r,
                             proto::IterationDoneResponse* out, absl::Duration) override {
    return core_->IterationDone(r, out);
  }
  absl::Status Checkpoint(const proto::CheckpointRequest& r, proto::CheckpointResponse* out,
                          absl::Duration timeout) override {
    return core_->Checkpoint(r, absl::Now() + timeout, out);
  }
  absl::Status Stats(const proto::PsStatsRequest& r, proto::PsStatsResponse* out,
                     absl::Duration) override {
    return core_->Stats(r, out);
  }

 private:
  PsCore* core_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ShardStub> MakeInProcessShardStub(PsCore* core, std::string name) {
  return std::make_unique<InProcessShardStub>(core, std::move(name));
}

}  // namespace herald::ps
