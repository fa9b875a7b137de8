#include "worker/model/dot_interaction.h"

namespace herald::worker {

DotInteraction::DotInteraction(Device* device, int fields, int dim)
    : device_(device), fields_(fields), dim_(dim) {
  y_.Bind(device);
  dy_.Bind(device);
}

const float* DotInteraction::Forward(const float* x, int x_stride, int rows) {
  x_ = x;
  x_stride_ = x_stride;
  rows_ = rows;
  y_.Resize(static_cast<size_t>(rows) * out());
  dy_.Resize(y_.size());
  device_->Fill(dy_.data(), dy_.size(), 0.0f);
  device_->DotInteractionForward(x, x_stride, rows, fields_, dim_, y_.data(), out());
  return y_.data();
}

void DotInteraction::Backward(float* dx, int dx_stride) {
  device_->DotInteractionBackward(x_, x_stride_, dy_.data(), out(), rows_, fields_, dim_, dx,
                                  dx_stride);
}

}  // namespace herald::worker
