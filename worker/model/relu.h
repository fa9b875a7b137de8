#pragma once
// y = max(x, 0) on a contiguous rows × width input (conventions: linear.h).

#include "worker/device/device_array.h"

namespace herald::worker {

class Relu {
 public:
  Relu(Device* device, int width);

  const float* Forward(const float* x, int rows);
  // dx += dy where the output is positive. dx is rows × width, contiguous.
  void Backward(float* dx);

  int width() const { return width_; }
  const float* output() const { return y_.data(); }
  float* output_grad() { return dy_.data(); }

 private:
  Device* device_;
  int width_;
  DeviceArray<float> y_, dy_;
};

}  // namespace herald::worker
