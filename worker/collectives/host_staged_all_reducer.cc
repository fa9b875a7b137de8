#include "worker/collectives/host_staged_all_reducer.h"

#include <utility>

#include "common/status.h"

namespace herald::worker {

HostStagedAllReducer::HostStagedAllReducer(Device* device, std::unique_ptr<DenseAllReducer> host)
    : device_(device), host_(std::move(host)) {}

absl::Status HostStagedAllReducer::AllReduceSum(float* data, size_t n) {
  StartAllReduceSum(data, n);
  return FinishAllReduceSum();
}

void HostStagedAllReducer::StartAllReduceSum(float* data, size_t n) {
  started_data_ = data;
  started_n_ = n;
  staging_.resize(n);
  if (n > 0) device_->CopyToHost(data, staging_.data(), n * sizeof(float));
  started_status_ = device_->status();
  if (started_status_.ok()) host_->StartAllReduceSum(staging_.data(), n);
}

absl::Status HostStagedAllReducer::FinishAllReduceSum() {
  float* const data = std::exchange(started_data_, nullptr);
  const size_t n = std::exchange(started_n_, 0);
  if (!started_status_.ok()) return std::exchange(started_status_, absl::OkStatus());
  HERALD_RETURN_IF_ERROR(host_->FinishAllReduceSum());
  if (n > 0) device_->CopyToDevice(staging_.data(), data, n * sizeof(float));
  return device_->status();
}

}  // namespace herald::worker
