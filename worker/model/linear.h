#pragma once
// Fully connected layer y = x·W + b, W is in×out (row-major), b is out.
//
// Layer conventions shared by every file in worker/model:
// - Forward keeps pointers to its inputs; they must stay unchanged until
//   Backward.
// - A layer owns its output and the gradient of its output
//   (output_grad(), zeroed by Forward). Whoever consumes the output ADDS its
//   gradient there; Backward then reads it.
// - Backward writes the layer's parameter gradients (each parameter belongs
//   to one layer used once per step) and ADDS the input gradient into the
//   caller's buffer (nullptr: not needed).

#include "worker/device/device_array.h"
#include "worker/model/dense_parameters.h"

namespace herald::worker {

class Linear {
 public:
  Linear(Device* device, DenseParameters* params, int in, int out);

  // x: rows × in with row stride x_stride.
  const float* Forward(const float* x, int x_stride, int rows);
  void Backward(float* dx, int dx_stride);

  // The offset of its first parameter (the weights; the bias follows).
  size_t first_param() const { return weight_; }
  int in() const { return in_; }
  int out() const { return out_; }
  const float* output() const { return y_.data(); }
  float* output_grad() { return dy_.data(); }

 private:
  Device* device_;
  DenseParameters* params_;
  int in_, out_;
  size_t weight_, bias_;  // offsets in params_
  const float* x_ = nullptr;
  int x_stride_ = 0, rows_ = 0;
  DeviceArray<float> y_, dy_;
};

}  // namespace herald::worker
