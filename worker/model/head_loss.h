#pragma once
// The loss of the model's output against the label it predicts
// (conventions: linear.h): a binary label's is sigmoid + binary
// cross-entropy on the logit, a regression label's the squared error of
// the output itself. Loss of a step = Σ_samples loss; gradients are scaled
// by `grad_scale` (1 / global batch size), so workers holding parts of the
// global batch produce gradients that sum to the global-batch mean
// gradient.

#include "worker/device/device_array.h"

namespace herald::worker {

enum class LossKind { kBinaryCrossEntropy, kSquaredError };

class HeadLoss {
 public:
  HeadLoss(Device* device, LossKind kind);

  // outputs, labels: rows floats. The losses stay on the device (TakeLoss).
  void Forward(const float* outputs, const float* labels, int rows, float grad_scale);
  // Σ loss of the last Forward, summed in double on the host in sample
  // order; waits for the device.
  double TakeLoss() const;
  // doutputs += ∂(scaled loss)/∂outputs.
  void Backward(float* doutputs);
  // What the model predicts from its outputs: click probabilities
  // (sigmoid) for a binary label, the outputs as they are for a regression
  // label.
  void Predict(const float* outputs, int rows, float* predictions);

  LossKind kind() const { return kind_; }

 private:
  Device* device_;
  LossKind kind_;
  int rows_ = 0;
  DeviceArray<float> losses_, doutputs_;
};

}  // namespace herald::worker
