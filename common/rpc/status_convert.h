#pragma once
// The one place that converts between absl::Status and grpc::Status.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace herald::rpc {

// Same code and message. Codes map one to one (both follow google.rpc.Code).
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace herald::rpc
