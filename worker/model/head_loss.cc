#include "worker/model/head_loss.h"

#include <vector>

namespace herald::worker {

HeadLoss::HeadLoss(Device* device, LossKind kind) : device_(device), kind_(kind) {
  losses_.Bind(device);
  doutputs_.Bind(device);
}

void HeadLoss::Forward(const float* outputs, const float* labels, int rows, float grad_scale) {
  rows_ = rows;
  losses_.Resize(rows);
  doutputs_.Resize(rows);
  if (kind_ == LossKind::kSquaredError) {
    device_->SquaredError(outputs, labels, rows, grad_scale, losses_.data(), doutputs_.data());
  } else {
    device_->SigmoidCrossEntropy(outputs, labels, rows, grad_scale, losses_.data(),
                                 doutputs_.data());
  }
}

double HeadLoss::TakeLoss() const {
  double sum = 0.0;
  for (float l : losses_.ToHost()) sum += l;
  return sum;
}

void HeadLoss::Backward(float* doutputs) { device_->Axpy(rows_, 1.0f, doutputs_.data(), doutputs); }

void HeadLoss::Predict(const float* outputs, int rows, float* predictions) {
  if (kind_ == LossKind::kSquaredError) {
    if (rows > 0) device_->Copy2D(outputs, 1, rows, 1, predictions, 1);
  } else {
    device_->Sigmoid(outputs, rows, predictions);
  }
}

}  // namespace herald::worker
