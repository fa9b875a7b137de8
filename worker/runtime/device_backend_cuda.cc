#include "worker/collectives/nccl_all_reducer.h"
#include "worker/device/cuda/cuda_device.h"
#include "worker/runtime/device_backend.h"

namespace herald::worker::backend {

bool HasCuda() { return true; }

absl::StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal,
                                                         const DeviceOptions& options) {
  CudaDeviceOptions cuda;
  cuda.ordinal = ordinal;
  cuda.pinned_staging_bytes = options.pinned_staging_bytes;
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Create(cuda);
  if (!device.ok()) return device.status();
  return std::unique_ptr<Device>(std::move(*device));
}

absl::StatusOr<DeviceDescription> DescribeCudaDevice(int ordinal) {
  CudaDeviceOptions cuda;
  cuda.ordinal = ordinal;
  cuda.pinned_staging_bytes = 4096;  // a probe: no transfers
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Create(cuda);
  if (!device.ok()) return device.status();
  DeviceDescription d;
  d.kind = proto::DEVICE_KIND_CUDA;
  d.memory_bytes = (*device)->total_memory();
  d.uuid = (*device)->uuid();
  d.model = (*device)->model();
  return d;
}

absl::StatusOr<std::unique_ptr<DenseAllReducer>> ConnectNccl(Device* device, KvStore* store,
                                                             int rank, int size,
                                                             const std::string& prefix,
                                                             absl::Duration timeout) {
  auto* cuda = dynamic_cast<CudaDevice*>(device);
  if (cuda == nullptr) {
    return absl::FailedPreconditionError("NCCL needs a CUDA device, this worker runs on " +
                                         device->name());
  }
  NcclOptions options;
  options.prefix = prefix;
  options.timeout = timeout;
  absl::StatusOr<std::unique_ptr<NcclAllReducer>> nccl =
      NcclAllReducer::Connect(store, rank, size, cuda, options);
  if (!nccl.ok()) return nccl.status();
  return std::unique_ptr<DenseAllReducer>(std::move(*nccl));
}

}  // namespace herald::worker::backend
