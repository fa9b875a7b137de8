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
  // The device copies run on the calling thread (Start: to the host, Finish:
  // back), the host reducer's Start and Finish between them.
  void StartAllReduceSum(float* data, size_t n) override;
  absl::Status FinishAllReduceSum() override;

 private:
  Device* device_;
  std::unique_ptr<DenseAllReducer> host_;
  std::vector<float> staging_;  // reused between calls
  // Between Start and Finish: where the sum goes, and Start's error.
  float* started_data_ = nullptr;
  size_t started_n_ = 0;
  absl::Status started_status_;
};

}  // namespace herald::worker
