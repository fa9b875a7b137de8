#pragma once
// A DenseAllReducer for device memory over one for host memory: copies the
// data to the host, all-reduces it there (Gloo), copies it back. Lets CUDA
// workers join a Gloo all-reduce (mixed CPU/GPU jobs, several workers on one
// GPU) with the same every-rank-same-bits contract as the host reducer.

#include <memory>
#include <vector>

#include "worker/collectives/all_reducer.h"
#include "worker/device/device.h"

namespace herald::worker {

class HostStagedAllReducer final : public DenseAllReducer {
 public:
  // `device` must outlive the reducer.
  HostStagedAllReducer(Device* device, std::unique_ptr<DenseAllReducer> host);

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  // Errors: the host reducer's, or the device's (status()) after the copies.
  absl::Status AllReduceSum(float* data, size_t n) override;

 private:
  Device* device_;
  std::unique_ptr<DenseAllReducer> host_;
  std::vector<float> staging_;  // reused between calls
};

}  // namespace herald::worker
