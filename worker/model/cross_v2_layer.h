#pragma once
// DCN-v2 cross layer (Wang et al., 2021): y = x0 ⊙ (xl·W + b) + xl, W of
// width × width, or of rank r as V·U (V: width × r, no bias; U: r × width),
// b of the width (conventions: linear.h). Parameters, in reservation order:
// W, b (full rank) or V, U, b. As in CrossLayer, x0 and xl may be one
// tensor; both gradients are added.

#include "worker/device/device_array.h"
#include "worker/model/dense_parameters.h"

namespace herald::worker {

class CrossV2Layer {
 public:
  // rank 0: full rank. REQUIRES: rank < width.
  CrossV2Layer(Device* device, DenseParameters* params, int width, int rank);

  const float* Forward(const float* x0, int x0_stride, const float* xl, int xl_stride, int rows);
  void Backward(float* dx0, int dx0_stride, float* dxl, int dxl_stride);

  int width() const { return width_; }
  const float* output() const { return y_.data(); }
  float* output_grad() { return dy_.data(); }

 private:
  Device* device_;
  DenseParameters* params_;
  int width_, rank_;
  size_t v_ = 0, u_ = 0, bias_ = 0;  // full rank: u_ is W
  const float* x0_ = nullptr;
  const float* xl_ = nullptr;
  int x0_stride_ = 0, xl_stride_ = 0, rows_ = 0;
  // t = xl·V (low rank), u = t·U + b (or xl·W + b), their gradients.
  DeviceArray<float> t_, dt_, u_out_, du_, y_, dy_;
};

}  // namespace herald::worker
