#pragma once
// Creates a worker's compute device and its dense all-reducer from names
// and the scheduler's choice, so the rest of the worker never names a
// device kind. "cpu" is always available; "cuda:N" needs a build with
// --config=cuda (otherwise a FailedPrecondition saying so) and GPU N.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/common.pb.h"
#include "proto/scheduler.pb.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/gloo_all_reducer.h"
#include "worker/collectives/kv_store.h"
#include "worker/device/device.h"

namespace herald::worker {

struct DeviceOptions {
  // CUDA: each of the two pinned host staging buffers (bounds the host
  // memory transfers use).
  size_t pinned_staging_bytes = size_t{16} << 20;
};

// What a worker registers about its device.
struct DeviceDescription {
  proto::DeviceKind kind = proto::DEVICE_KIND_CPU;
  uint64_t memory_bytes = 0;  // device memory (0 for the CPU: host memory)
  std::string uuid;           // GPU UUID; empty for the CPU
  std::string model;          // e.g. "NVIDIA H100 80GB HBM3"; "cpu"
};

// Adds a device name CreateDevice and DescribeDevice accept in this process
// besides "cpu" and "cuda:N" (a test device: null_device.h). Replaces an
// earlier registration of the name. Thread-safe.
void RegisterDevice(const std::string& name, DeviceDescription description,
                    std::function<std::unique_ptr<Device>()> create);

// Whether this binary can run CUDA devices.
bool BuiltWithCuda();

// Checks the name's syntax: "cpu" or "cuda:N" (N ≥ 0), or a registered
// name. Errors: InvalidArgument naming the text.
absl::Status CheckDeviceName(const std::string& name);

// Errors: InvalidArgument (syntax), FailedPrecondition (no CUDA in this
// build, or no GPU N), the CUDA error of the device setup.
absl::StatusOr<std::unique_ptr<Device>> CreateDevice(const std::string& name,
                                                     const DeviceOptions& options);
absl::StatusOr<DeviceDescription> DescribeDevice(const std::string& name);

struct CollectiveOptions {
  GlooOptions gloo;  // Gloo: interface, key prefix, timeout
  std::string nccl_prefix = "nccl";
};

// The all-reducer of rank `rank` of `size` over `device`'s memory: none
// needed for one rank; NCCL when `collective` says so (the device must be a
// CUDA device); otherwise Gloo, through host memory when the device is a
// GPU. Blocks until every rank joined. Errors: the collective's, or
// FailedPrecondition for NCCL on a CPU device.
absl::StatusOr<std::unique_ptr<DenseAllReducer>> ConnectDenseAllReducer(
    Device* device, proto::DenseCollective collective, KvStore* store, int rank, int size,
    const CollectiveOptions& options);

}  // namespace herald::worker
