#pragma once
// The protobuf side of a JobShard: decodes a request's byte fields into the
// spans the shard serves (ps_server/wire/shard_requests.h) and writes a
// fetch's rows straight into the response. Byte fields are viewed in place
// where they are aligned for their type (protobuf keeps them on the heap, so
// they are) and copied otherwise. A request that cannot be decoded (a byte
// count that is not a multiple of its type's size) is counted as rejected
// by the shard; its error names the block and field.

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/ps.pb.h"
#include "ps_server/shard/job_shard.h"

namespace herald::ps {

absl::Status ServeFetch(JobShard& shard, const proto::FetchRequest& request, absl::Time deadline,
                        proto::FetchResponse* response);
absl::Status ServePush(JobShard& shard, const proto::PushGradientsRequest& request);
absl::Status ServeWriteBack(JobShard& shard, const proto::WriteBackRequest& request);
absl::Status ServeIterationDone(JobShard& shard, const proto::IterationDoneRequest& request,
                                proto::IterationDoneResponse* response);
absl::Status ServeCheckpoint(JobShard& shard, const proto::CheckpointRequest& request,
                             absl::Time deadline, proto::CheckpointResponse* response,
                             const CheckpointProgress& progress = {});

}  // namespace herald::ps
