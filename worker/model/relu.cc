#include "worker/model/relu.h"

namespace herald::worker {

Relu::Relu(Device* device, int width) : device_(device), width_(width) {
  y_.Bind(device);
  dy_.Bind(device);
}

const float* Relu::Forward(const float* x, int rows) {
  y_.Resize(static_cast<size_t>(rows) * width_);
  dy_.Resize(y_.size());
  device_->Fill(dy_.data(), dy_.size(), 0.0f);
  device_->Relu(x, y_.size(), y_.data());
  return y_.data();
}

void Relu::Backward(float* dx) { device_->ReluBackward(y_.data(), dy_.data(), y_.size(), dx); }

}  // namespace herald::worker
