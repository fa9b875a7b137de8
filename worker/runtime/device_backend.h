#pragma once
// The CUDA half of device_factory.h, implemented twice: device_backend_cuda.cc
// (builds with --config=cuda) and device_backend_none.cc (other builds,
// where every function refuses with FailedPrecondition). Internal to
// //worker/runtime:device_factory.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/kv_store.h"
#include "worker/device/device.h"
#include "worker/runtime/device_factory.h"

namespace herald::worker::backend {

bool HasCuda();
absl::StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal, const DeviceOptions& options);
absl::StatusOr<DeviceDescription> DescribeCudaDevice(int ordinal);
// REQUIRES: `device` was made by CreateCudaDevice.
absl::StatusOr<std::unique_ptr<DenseAllReducer>> ConnectNccl(Device* device, KvStore* store,
                                                             int rank, int size,
                                                             const std::string& prefix,
                                                             absl::Duration timeout);

}  // namespace herald::worker::backend
