#pragma once
// DCN cross layer (Wang et al., 2017): y = x0 · (xl·w) + b + xl, with w and b
// of the input width (conventions: linear.h). For the first layer x0 and xl
// are the same tensor; both gradients are added, so that works.

#include "worker/device/device_array.h"
#include "worker/model/dense_parameters.h"

namespace herald::worker {

class CrossLayer {
 public:
  CrossLayer(Device* device, DenseParameters* params, int width);

  const float* Forward(const float* x0, int x0_stride, const float* xl, int xl_stride, int rows);
  void Backward(float* dx0, int dx0_stride, float* dxl, int dxl_stride);

  int width() const { return width_; }
  const float* output() const { return y_.data(); }
  float* output_grad() { return dy_.data(); }

 private:
  Device* device_;
  DenseParameters* params_;
  int width_;
  size_t weight_, bias_;
  const float* x0_ = nullptr;
  const float* xl_ = nullptr;
  int x0_stride_ = 0, xl_stride_ = 0, rows_ = 0;
  DeviceArray<float> s_, ds_, y_, dy_;  // s = xl·w per row
};

}  // namespace herald::worker
