#include "ps_server/client/ucx_shard_stub.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "ps_server/wire/row_wire.h"

namespace herald::ps {
namespace {

// `bytes` as `count` elements of T (the wire encoder copies them bytewise).
template <typename T>
absl::StatusOr<absl::Span<const T>> View(const std::string& bytes, const char* what) {
  if (bytes.size() % sizeof(T) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", bytes.size(), " bytes, not whole elements"));
  }
  return absl::MakeConstSpan(reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T));
}

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

  absl::StatusOr<FetchedRows> FetchRows(const proto::FetchRequest& r,
                                        absl::Duration timeout) override {
    FetchIn in{r.iteration(), r.early(), r.read_only(), {}};
    std::vector<uint64_t> counts;
    for (const proto::KeyBlock& k : r.keys()) {
      HERALD_ASSIGN_OR_RETURN(absl::Span<const Key> keys, View<Key>(k.keys(), "keys"));
      in.blocks.push_back({k.table_id(), keys});
      counts.push_back(keys.size());
    }
    HERALD_ASSIGN_OR_RETURN(ucx::AlignedBuffer reply,
                            Call(wire::EncodeFetch(r.job_id(), r.run_id(), in), timeout));
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
  }

  absl::Status Fetch(const proto::FetchRequest& r, proto::FetchResponse* out,
                     absl::Duration timeout) override {
    HERALD_ASSIGN_OR_RETURN(FetchedRows fetched, FetchRows(r, timeout));
    for (size_t b = 0; b < fetched.blocks.size(); ++b) {
      const FetchedRows::Block& block = fetched.blocks[b];
      proto::RowBlock* rows = out->add_rows();
      rows->set_table_id(r.keys(static_cast<int>(b)).table_id());
      rows->set_keys(r.keys(static_cast<int>(b)).keys());
      rows->set_row_floats(block.row_floats);
      rows->set_rows(block.rows, block.count * block.row_floats * sizeof(float));
      rows->set_versions(block.versions, block.count * sizeof(uint64_t));
    }
    return absl::OkStatus();
  }

  absl::Status PushGradients(const proto::PushGradientsRequest& r,
                             absl::Duration timeout) override {
    PushIn in{r.iteration(), r.worker_rank(), {}};
    for (const proto::GradientBlock& g : r.grads()) {
      HERALD_ASSIGN_OR_RETURN(absl::Span<const Key> keys, View<Key>(g.keys(), "keys"));
      HERALD_ASSIGN_OR_RETURN(absl::Span<const float> grads, View<float>(g.grads(), "grads"));
      in.blocks.push_back({g.table_id(), g.dim(), keys, grads});
    }
    return Call(wire::EncodePush(r.job_id(), r.run_id(), in), timeout).status();
  }

  absl::Status WriteBack(const proto::WriteBackRequest& r, absl::Duration timeout) override {
    WriteBackIn in{r.iteration(), r.worker_rank(), {}};
    for (const proto::RowBlock& b : r.rows()) {
      HERALD_ASSIGN_OR_RETURN(absl::Span<const Key> keys, View<Key>(b.keys(), "keys"));
      HERALD_ASSIGN_OR_RETURN(absl::Span<const float> rows, View<float>(b.rows(), "rows"));
      HERALD_ASSIGN_OR_RETURN(absl::Span<const uint64_t> versions,
                              View<uint64_t>(b.versions(), "versions"));
      in.blocks.push_back({b.table_id(), b.row_floats(), keys, rows, versions});
    }
    return Call(wire::EncodeWriteBack(r.job_id(), r.run_id(), in), timeout).status();
  }

 private:
  absl::StatusOr<ucx::AlignedBuffer> Call(ucx::AlignedBuffer request, absl::Duration timeout) {
    absl::StatusOr<ucx::AlignedBuffer> reply = rpc_->Call(index_, std::move(request), timeout);
    if (!reply.ok()) {
      return absl::Status(reply.status().code(),
                          absl::StrCat(name(), ": ", reply.status().message()));
    }
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
