#include "worker/model/bce_loss.h"

#include <vector>

namespace herald::worker {

BceLoss::BceLoss(Device* device) : device_(device) {
  losses_.Bind(device);
  dlogits_.Bind(device);
}

void BceLoss::Forward(const float* logits, const float* labels, int rows, float grad_scale) {
  rows_ = rows;
  losses_.Resize(rows);
  dlogits_.Resize(rows);
  device_->SigmoidCrossEntropy(logits, labels, rows, grad_scale, losses_.data(), dlogits_.data());
}

double BceLoss::TakeLoss() const {
  double sum = 0.0;
  for (float l : losses_.ToHost()) sum += l;
  return sum;
}

void BceLoss::Backward(float* dlogits) { device_->Axpy(rows_, 1.0f, dlogits_.data(), dlogits); }

}  // namespace herald::worker
