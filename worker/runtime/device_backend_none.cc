#include "worker/runtime/device_backend.h"

namespace herald::worker::backend {
namespace {

absl::Status NoCuda(int ordinal) {
  return absl::FailedPreconditionError(
      "cuda:" + std::to_string(ordinal) +
      ": this binary was built without CUDA (build with bazel --config=cuda)");
}

}  // namespace

bool HasCuda() { return false; }

absl::StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal, const DeviceOptions&) {
  return NoCuda(ordinal);
}

absl::StatusOr<DeviceDescription> DescribeCudaDevice(int ordinal) { return NoCuda(ordinal); }

absl::StatusOr<std::unique_ptr<DenseAllReducer>> ConnectNccl(Device*, KvStore*, int, int,
                                                             const std::string&, absl::Duration) {
  return absl::FailedPreconditionError("NCCL: this binary was built without CUDA");
}

}  // namespace herald::worker::backend
