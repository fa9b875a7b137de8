#pragma once
// DLRM dot interaction: pairwise dot products of `fields` vectors of equal
// dimension, lower triangle without the diagonal (conventions: linear.h).
// Output rows × fields·(fields−1)/2.

#include "worker/device/device_array.h"

namespace herald::worker {

class DotInteraction {
 public:
  DotInteraction(Device* device, int fields, int dim);

  const float* Forward(const float* x, int x_stride, int rows);
  void Backward(float* dx, int dx_stride);

  int out() const { return fields_ * (fields_ - 1) / 2; }
  const float* output() const { return y_.data(); }
  float* output_grad() { return dy_.data(); }

 private:
  Device* device_;
  int fields_, dim_;
  const float* x_ = nullptr;
  int x_stride_ = 0, rows_ = 0;
  DeviceArray<float> y_, dy_;
};

}  // namespace herald::worker
