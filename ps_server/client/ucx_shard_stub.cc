#include "ps_server/client/ucx_shard_stub.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "ps_server/wire/row_wire.h"

namespace herald::ps {
namespace {

class UcxShardStub final : public ShardStub {
 public:
  UcxShardStub(std::unique_ptr<ShardStub> control, std::shared_ptr<ucx::UcxRpcClient> rpc,
               size_t index)
      : control_(std::move(control)), rpc_(std::move(rpc)), index_(index) {}

  std::string name() const override { return absl::StrCat(control_->name(), " (UCX)"); }
  void Cancel(const std::string& why) override { rpc_->CancelAll(why); }

  absl::Status StartJob(const proto::PsStartJobRequest& r, proto::PsStartJobResponse* out,
                        absl::Duration timeout) override {
    return control_->StartJob(r, out, timeout);
  }
  absl::Status EndJob(const proto::PsEndJobRequest& r, absl::Duration timeout) override {
    return control_->EndJob(r, timeout);
  }
  absl::Status IterationDone(const proto::IterationDoneRequest& r,
                             proto::IterationDoneResponse* out, absl::Duration timeout) override {
    return control_->IterationDone(r, out, timeout);
  }
  absl::Status Checkpoint(const proto::CheckpointRequest& r, proto::CheckpointResponse* out,
                          absl::Duration timeout) override {
    return control_->Checkpoint(r, out, timeout);
  }
  absl::Status Stats(const proto::PsStatsRequest& r, proto::PsStatsResponse* out,
                     absl::Duration timeout) override {
    return control_->Stats(r, out, timeout);
  }
  absl::Status LookAhead(const proto::LookAheadRequest& r, absl::Duration timeout) override {
    return control_->LookAhead(r, timeout);
  }

  absl::StatusOr<FetchedRows> Fetch(const DataCallOf& of, const FetchIn& in,
                                    absl::Duration timeout) override {
    return StartFetch(of, in, timeout).Wait();
  }
  bool starts_calls() const override { return true; }
  PendingCall<absl::StatusOr<FetchedRows>> StartFetch(const DataCallOf& of, const FetchIn& in,
                                                      absl::Duration timeout) override {
    std::vector<uint64_t> counts;
    for (const KeysIn& b : in.blocks) counts.push_back(b.keys.size());
    auto call = Start(wire::EncodeFetch(of.job_id, of.run_id, in), timeout);
    return PendingCall<absl::StatusOr<FetchedRows>>(
        [call, counts]() -> absl::StatusOr<FetchedRows> {
          HERALD_ASSIGN_OR_RETURN(ucx::AlignedBuffer reply, call->Wait());
          auto owner = std::make_shared<ucx::AlignedBuffer>(std::move(reply));
          HERALD_ASSIGN_OR_RETURN(std::vector<wire::RowsView> views,
                                  wire::DecodeFetchReply(*owner, counts));
          FetchedRows fetched;
          for (const wire::RowsView& v : views) {
            fetched.blocks.push_back({v.row_floats, v.versions.size(),
                                      reinterpret_cast<const char*>(v.rows.data()),
                                      reinterpret_cast<const char*>(v.versions.data())});
          }
          fetched.owner = std::move(owner);
          return fetched;
        });
  }
  PendingCall<absl::Status> StartPushGradients(const DataCallOf& of, const PushIn& in,
                                               absl::Duration timeout) override {
    auto call = Start(wire::EncodePush(of.job_id, of.run_id, in), timeout);
    return PendingCall<absl::Status>([call] { return call->Wait().status(); });
  }
  PendingCall<absl::Status> StartWriteBack(const DataCallOf& of, const WriteBackIn& in,
                                           absl::Duration timeout) override {
    auto call = Start(wire::EncodeWriteBack(of.job_id, of.run_id, in), timeout);
    return PendingCall<absl::Status>([call] { return call->Wait().status(); });
  }

  absl::Status PushGradients(const DataCallOf& of, const PushIn& in,
                             absl::Duration timeout) override {
    return Call(wire::EncodePush(of.job_id, of.run_id, in), timeout).status();
  }

  absl::Status WriteBack(const DataCallOf& of, const WriteBackIn& in,
                         absl::Duration timeout) override {
    return Call(wire::EncodeWriteBack(of.job_id, of.run_id, in), timeout).status();
  }

 private:
  // A request sent (or not: `started` holds why) and not yet waited for;
  // given up when dropped unwaited.
  class StartedCall {
   public:
    StartedCall(const UcxShardStub* stub, absl::StatusOr<uint64_t> started, absl::Duration timeout)
        : stub_(stub), started_(std::move(started)), timeout_(timeout) {}
    ~StartedCall() {
      if (started_.ok() && !waited_) stub_->rpc_->Forget(*started_);
    }
    absl::StatusOr<ucx::AlignedBuffer> Wait() {
      if (!started_.ok()) return stub_->Named(started_.status());
      waited_ = true;
      absl::StatusOr<ucx::AlignedBuffer> reply = stub_->rpc_->Wait(*started_, timeout_);
      if (!reply.ok()) return stub_->Named(reply.status());
      return reply;
    }

   private:
    const UcxShardStub* stub_;
    absl::StatusOr<uint64_t> started_;
    absl::Duration timeout_;
    bool waited_ = false;
  };
  std::shared_ptr<StartedCall> Start(ucx::AlignedBuffer request, absl::Duration timeout) {
    return std::make_shared<StartedCall>(this, rpc_->Start(index_, std::move(request)), timeout);
  }
  absl::Status Named(const absl::Status& s) const {
    return absl::Status(s.code(), absl::StrCat(name(), ": ", s.message()));
  }

  absl::StatusOr<ucx::AlignedBuffer> Call(ucx::AlignedBuffer request, absl::Duration timeout) {
    absl::StatusOr<ucx::AlignedBuffer> reply = rpc_->Call(index_, std::move(request), timeout);
    if (!reply.ok()) return Named(reply.status());
    return reply;
  }

  std::unique_ptr<ShardStub> control_;
  std::shared_ptr<ucx::UcxRpcClient> rpc_;
  const size_t index_;
};

}  // namespace

std::unique_ptr<ShardStub> MakeUcxShardStub(std::unique_ptr<ShardStub> control,
                                            std::shared_ptr<ucx::UcxRpcClient> rpc, size_t index) {
  return std::make_unique<UcxShardStub>(std::move(control), std::move(rpc), index);
}

}  // namespace herald::ps
