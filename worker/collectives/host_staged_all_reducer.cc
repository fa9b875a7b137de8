#include "worker/collectives/host_staged_all_reducer.h"

#include "common/status.h"

namespace herald::worker {

HostStagedAllReducer::HostStagedAllReducer(Device* device, std::unique_ptr<DenseAllReducer> host)
    : device_(device), host_(std::move(host)) {}

absl::Status HostStagedAllReducer::AllReduceSum(float* data, size_t n) {
  staging_.resize(n);
  if (n > 0) device_->CopyToHost(data, staging_.data(), n * sizeof(float));
  HERALD_RETURN_IF_ERROR(device_->status());
  HERALD_RETURN_IF_ERROR(host_->AllReduceSum(staging_.data(), n));
  if (n > 0) device_->CopyToDevice(staging_.data(), data, n * sizeof(float));
  return device_->status();
}

}  // namespace herald::worker
