#include "ps_server/client/grpc_shard_stub.h"

#include "absl/strings/str_cat.h"
#include "common/rpc/status_convert.h"
#include "common/status.h"
#include "proto/ps.grpc.pb.h"

namespace herald::ps {
namespace {

// A span's bytes, for a protobuf bytes field.
template <typename T>
std::string Bytes(absl::Span<const T> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

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
  absl::StatusOr<FetchedRows> Fetch(const DataCallOf& of, const FetchIn& in,
                                    absl::Duration timeout) override {
    proto::FetchRequest r;
    r.set_job_id(std::string(of.job_id));
    r.set_run_id(of.run_id);
    r.set_iteration(in.iteration);
    r.set_early(in.early != 0);
    r.set_early_distance(in.early);
    r.set_read_only(in.read_only);
    for (const KeysIn& b : in.blocks) {
      proto::KeyBlock* block = r.add_keys();
      block->set_table_id(b.table);
      block->set_keys(Bytes(b.keys));
    }
    auto out = std::make_shared<proto::FetchResponse>();
    HERALD_RETURN_IF_ERROR(
        Call(timeout, [&](grpc::ClientContext* c) { return stub_->Fetch(c, r, out.get()); }));
    // The rows are read where protobuf put them.
    if (out->rows_size() != static_cast<int>(in.blocks.size())) {
      return absl::DataLossError(absl::StrCat(out->rows_size(), " row blocks for ",
                                              in.blocks.size(), " asked from ", name()));
    }
    FetchedRows fetched;
    for (int b = 0; b < out->rows_size(); ++b) {
      const proto::RowBlock& block = out->rows(b);
      const uint32_t rf = block.row_floats();
      const size_t n = in.blocks[b].keys.size();
      if (rf == 0 || block.rows().size() != n * rf * sizeof(float) ||
          block.versions().size() != n * sizeof(uint64_t)) {
        return absl::DataLossError(
            absl::StrCat("malformed rows of table ", block.table_id(), " from ", name()));
      }
      fetched.blocks.push_back({rf, n, block.rows().data(), block.versions().data()});
    }
    fetched.owner = std::move(out);
    return fetched;
  }
  absl::Status PushGradients(const DataCallOf& of, const PushIn& in,
                             absl::Duration timeout) override {
    proto::PushGradientsRequest r;
    r.set_job_id(std::string(of.job_id));
    r.set_run_id(of.run_id);
    r.set_iteration(in.iteration);
    r.set_worker_rank(in.worker);
    for (const GradientsIn& g : in.blocks) {
      proto::GradientBlock* block = r.add_grads();
      block->set_table_id(g.table);
      block->set_keys(Bytes(g.keys));
      block->set_dim(g.dim);
      block->set_grads(Bytes(g.grads));
    }
    proto::PushGradientsResponse out;
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->PushGradients(c, r, &out); });
  }
  absl::Status WriteBack(const DataCallOf& of, const WriteBackIn& in,
                         absl::Duration timeout) override {
    proto::WriteBackRequest r;
    r.set_job_id(std::string(of.job_id));
    r.set_run_id(of.run_id);
    r.set_iteration(in.iteration);
    r.set_worker_rank(in.worker);
    for (const RowsIn& rows : in.blocks) {
      proto::RowBlock* block = r.add_rows();
      block->set_table_id(rows.table);
      block->set_keys(Bytes(rows.keys));
      block->set_row_floats(rows.row_floats);
      block->set_rows(Bytes(rows.rows));
      block->set_versions(Bytes(rows.versions));
    }
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
  absl::Status LookAhead(const proto::LookAheadRequest& r, absl::Duration timeout) override {
    proto::LookAheadResponse out;
    return Call(timeout, [&](grpc::ClientContext* c) { return stub_->LookAhead(c, r, &out); });
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
