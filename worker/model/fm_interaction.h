#pragma once
// Factorisation-machine second-order term over `fields` embeddings of equal
// dimension: out[r] = ½ Σ_k ((Σ_f x_fk)² − Σ_f x_fk²) (conventions: linear.h).

#include "worker/device/device_array.h"

namespace herald::worker {

class FmInteraction {
 public:
  FmInteraction(Device* device, int fields, int dim);

  // x: rows × fields·dim with row stride x_stride. Output rows × 1.
  const float* Forward(const float* x, int x_stride, int rows);
  void Backward(float* dx, int dx_stride);

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
