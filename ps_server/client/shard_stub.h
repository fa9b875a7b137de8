#pragma once
// The calls of one parameter-server shard, as the client sees them: over
// gRPC (GrpcShardStub) or straight into a PsCore (InProcessShardStub).

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/ps.pb.h"

namespace herald::ps {

class PsCore;

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
  virtual absl::Status PushGradients(const proto::PushGradientsRequest& r,
                                     absl::Duration timeout) = 0;
  virtual absl::Status WriteBack(const proto::WriteBackRequest& r, absl::Duration timeout) = 0;
  virtual absl::Status IterationDone(const proto::IterationDoneRequest& r,
                                     proto::IterationDoneResponse* out, absl::Duration timeout) = 0;
  virtual absl::Status Checkpoint(const proto::CheckpointRequest& r, proto::CheckpointResponse* out,
                                  absl::Duration timeout) = 0;
  virtual absl::Status Stats(const proto::PsStatsRequest& r, proto::PsStatsResponse* out,
                             absl::Duration timeout) = 0;
};

// Not owned: `core` must outlive the stub.
std::unique_ptr<ShardStub> MakeInProcessShardStub(PsCore* core, std::string name);

}  // namespace herald::ps
