#pragma once
// The calls of one parameter-server shard, as the client sees them: over
// gRPC (GrpcShardStub), with the data calls over UCX (UcxShardStub), or
// straight into a PsCore (InProcessShardStub, in_process_ps_cluster.h,
// tests only). The data calls take the
// shard's own request spans (ps_server/wire/shard_requests.h), so each
// transport encodes the caller's arrays once.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/pending_call.h"
#include "proto/ps.pb.h"
#include "ps_server/wire/shard_requests.h"

namespace herald::ps {

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

// Whose data a data call carries: the job and its run (a shard refuses
// another run's, FAILED_PRECONDITION).
struct DataCallOf {
  std::string_view job_id;
  uint64_t run_id = 0;
};

class ShardStub {
 public:
  virtual ~ShardStub() = default;
  // Where the shard is, for error messages ("127.0.0.1:4567", "in-process 0").
  virtual std::string name() const = 0;

  // Control calls: protobuf messages.
  virtual absl::Status StartJob(const proto::PsStartJobRequest& r, proto::PsStartJobResponse* out,
                                absl::Duration timeout) = 0;
  virtual absl::Status EndJob(const proto::PsEndJobRequest& r, absl::Duration timeout) = 0;
  virtual absl::Status IterationDone(const proto::IterationDoneRequest& r,
                                     proto::IterationDoneResponse* out, absl::Duration timeout) = 0;
  virtual absl::Status Checkpoint(const proto::CheckpointRequest& r, proto::CheckpointResponse* out,
                                  absl::Duration timeout) = 0;
  virtual absl::Status Stats(const proto::PsStatsRequest& r, proto::PsStatsResponse* out,
                             absl::Duration timeout) = 0;
  virtual absl::Status LookAhead(const proto::LookAheadRequest& r, absl::Duration timeout) = 0;

  // Data calls: spans over the caller's keys, gradients and rows (valid
  // for the call), encoded once by the transport. The rows of a fetch are
  // read where they arrived (FetchedRows). Errors: the shard's
  // (JobShard::Fetch, PushGradients, WriteBack); DataLoss for an answer
  // whose sizes do not match the request; the transport's (UNAVAILABLE,
  // DEADLINE_EXCEEDED naming the shard).
  virtual absl::StatusOr<FetchedRows> Fetch(const DataCallOf& of, const FetchIn& in,
                                            absl::Duration timeout) = 0;
  virtual absl::Status PushGradients(const DataCallOf& of, const PushIn& in,
                                     absl::Duration timeout) = 0;
  virtual absl::Status WriteBack(const DataCallOf& of, const WriteBackIn& in,
                                 absl::Duration timeout) = 0;
  // The same calls started without waiting for their answer where the
  // transport can (starts_calls(): UCX sends the request and returns); the
  // others make the whole call here and return it done. The spans need to
  // live only until these return.
  virtual bool starts_calls() const { return false; }
  virtual PendingCall<absl::StatusOr<FetchedRows>> StartFetch(const DataCallOf& of,
                                                              const FetchIn& in,
                                                              absl::Duration timeout) {
    return PendingCall<absl::StatusOr<FetchedRows>>::Done(Fetch(of, in, timeout));
  }
  virtual PendingCall<absl::Status> StartPushGradients(const DataCallOf& of, const PushIn& in,
                                                       absl::Duration timeout) {
    return PendingCall<absl::Status>::Done(PushGradients(of, in, timeout));
  }
  virtual PendingCall<absl::Status> StartWriteBack(const DataCallOf& of, const WriteBackIn& in,
                                                   absl::Duration timeout) {
    return PendingCall<absl::Status>::Done(WriteBack(of, in, timeout));
  }
  // Fails the data calls in flight and later ones where the transport can
  // (UCX); others finish at their deadline.
  virtual void Cancel(const std::string& why) {}
};

}  // namespace herald::ps
