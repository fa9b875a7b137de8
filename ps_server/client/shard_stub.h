#pragma once
// The calls of one parameter-server shard, as the client sees them: over
// gRPC (GrpcShardStub), with the data calls over UCX (UcxShardStub), or
// straight into a PsCore (InProcessShardStub).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/ps.pb.h"

namespace herald::ps {

class PsCore;

// A fetch's answer read where it arrived: block b (request order) has
// `count` rows of `row_floats` floats and `count` versions, as raw bytes
// (any alignment), valid while `owner` lives.
struct FetchedRows {
  struct Block {
    uint32_t row_floats = 0;
    size_t count = 0;
    const char* rows = nullptr;
    const char* versions = nullptr;
  };
  std::shared_ptr<const void> owner;
  std::vector<Block> blocks;
};

class ShardStub {
 public:
  virtual ~ShardStub() = default;
  // Where the shard is, for error messages ("127.0.0.1:4567", "in-process 0").
  virtual std::string name() const = 0;

  virtual absl::Status StartJob(const proto::PsStartJobRequest& r, proto::PsStartJobResponse* out,
                                absl::Duration timeout) = 0;
  virtual absl::Status EndJob(const proto::PsEndJobRequest& r, absl::Duration timeout) = 0;
  virtual absl::Status Fetch(const proto::FetchRequest& r, proto::FetchResponse* out,
                             absl::Duration timeout) = 0;
  // The same answer without a FetchResponse where the transport has none
  // (UCX); by default Fetch's, in place. Errors: Fetch's; DataLoss for an
  // answer whose sizes do not match the request.
  virtual absl::StatusOr<FetchedRows> FetchRows(const proto::FetchRequest& r,
                                                absl::Duration timeout);
  virtual absl::Status PushGradients(const proto::PushGradientsRequest& r,
                                     absl::Duration timeout) = 0;
  virtual absl::Status WriteBack(const proto::WriteBackRequest& r, absl::Duration timeout) = 0;
  virtual absl::Status IterationDone(const proto::IterationDoneRequest& r,
                                     proto::IterationDoneResponse* out, absl::Duration timeout) = 0;
  virtual absl::Status Checkpoint(const proto::CheckpointRequest& r, proto::CheckpointResponse* out,
                                  absl::Duration timeout) = 0;
  virtual absl::Status Stats(const proto::PsStatsRequest& r, proto::PsStatsResponse* out,
                             absl::Duration timeout) = 0;
  // Fails the data calls in flight and later ones where the transport can
  // (UCX); others finish at their deadline.
  virtual void Cancel(const std::string& why) {}
};

// Not owned: `core` must outlive the stub.
std::unique_ptr<ShardStub> MakeInProcessShardStub(PsCore* core, std::string name);

}  // namespace herald::ps
