#include "ps_server/client/in_process_ps_cluster.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "ps_server/client/sharded_ps_client.h"

namespace herald::ps {
namespace {

// Calls the core directly: control calls as protos, data calls into the
// job's shard on the caller's spans (as herald_ps serves UCX requests), so
// validation, routing checks and the BSP protocol are exactly herald_ps's.
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
  absl::StatusOr<FetchedRows> Fetch(const DataCallOf& of, const FetchIn& in,
                                    absl::Duration timeout) override {
    HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobShard> shard, ShardOf(of));
    if (in.read_only && in.early) {
      return shard->Reject(
          absl::InvalidArgumentError("fetch: a read-only fetch (evaluation) cannot be early"));
    }
    // The shard writes every block's rows and versions into one buffer.
    struct Answer {
      std::vector<std::vector<char>> rows, versions;
    };
    auto answer = std::make_shared<Answer>();
    answer->rows.resize(in.blocks.size());
    answer->versions.resize(in.blocks.size());
    FetchedRows fetched;
    fetched.blocks.resize(in.blocks.size());
    HERALD_RETURN_IF_ERROR(
        shard->Fetch(in, core_->Bound(absl::Now() + timeout), [&](size_t b, uint32_t row_floats) {
          const size_t n = in.blocks[b].keys.size();
          answer->rows[b].resize(n * row_floats * sizeof(float));
          answer->versions[b].resize(n * sizeof(uint64_t));
          fetched.blocks[b] = {row_floats, n, answer->rows[b].data(), answer->versions[b].data()};
          return RowsOut{answer->rows[b].data(), answer->versions[b].data()};
        }));
    fetched.owner = std::move(answer);
    return fetched;
  }
  absl::Status PushGradients(const DataCallOf& of, const PushIn& in, absl::Duration) override {
    HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobShard> shard, ShardOf(of));
    return shard->PushGradients(in);
  }
  absl::Status WriteBack(const DataCallOf& of, const WriteBackIn& in, absl::Duration) override {
    HERALD_ASSIGN_OR_RETURN(std::shared_ptr<JobShard> shard, ShardOf(of));
    return shard->WriteBack(in);
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
  absl::Status LookAhead(const proto::LookAheadRequest& r, absl::Duration) override {
    return core_->LookAhead(r);
  }

 private:
  absl::StatusOr<std::shared_ptr<JobShard>> ShardOf(const DataCallOf& of) {
    return core_->Shard(std::string(of.job_id), of.run_id);
  }

  PsCore* core_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ShardStub> MakeInProcessShardStub(PsCore* core, std::string name) {
  return std::make_unique<InProcessShardStub>(core, std::move(name));
}

InProcessPsCluster::InProcessPsCluster(uint32_t num_shards, PsCoreOptions core_options,
                                       PsClientOptions client_options) {
  std::vector<std::unique_ptr<ShardStub>> stubs;
  for (uint32_t s = 0; s < num_shards; ++s) {
    cores_.push_back(std::make_unique<PsCore>(core_options));
    stubs.push_back(MakeInProcessShardStub(cores_.back().get(), absl::StrCat("in-process ", s)));
  }
  client_ = std::make_unique<ShardedPsClient>(std::move(stubs), client_options);
}

std::unique_ptr<PsClient> InProcessPsCluster::NewClient(PsClientOptions options) {
  std::vector<std::unique_ptr<ShardStub>> stubs;
  for (size_t s = 0; s < cores_.size(); ++s) {
    stubs.push_back(MakeInProcessShardStub(cores_[s].get(), absl::StrCat("in-process ", s)));
  }
  return std::make_unique<ShardedPsClient>(std::move(stubs), options);
}

}  // namespace herald::ps
