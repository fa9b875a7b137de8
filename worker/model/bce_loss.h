#pragma once
// Sigmoid + binary cross-entropy on logits (conventions: linear.h).
// Loss of a step = Σ_samples BCE; gradients are scaled by `grad_scale`
// (1 / global batch size), so workers holding parts of the global batch
// produce gradients that sum to the global-batch mean gradient.

#include "worker/device/device_array.h"

namespace herald::worker {

class BceLoss {
 public:
  explicit BceLoss(Device* device);

  // logits, labels: rows floats. The losses stay on the device (TakeLoss).
  void Forward(const float* logits, const float* labels, int rows, float grad_scale);
  // Σ loss of the last Forward, summed in double on the host in sample
  // order; waits for the device.
  double TakeLoss() const;
  // dlogits += ∂(scaled loss)/∂logits.
  void Backward(float* dlogits);

 private:
  Device* device_;
  int rows_ = 0;
  DeviceArray<float> losses_, dlogits_;
};

}  // namespace herald::worker
