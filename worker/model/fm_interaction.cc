#include "worker/model/fm_interaction.h"

namespace herald::worker {

FmInteraction::FmInteraction(Device* device, int fields, int dim)
    : device_(device), fields_(fields), dim_(dim) {
  y_.Bind(device);
  dy_.Bind(device);
}

const float* FmInteraction::Forward(const float* x, int x_stride, int rows) {
  x_ = x;
  x_stride_ = x_stride;
  rows_ = rows;
  y_.Resize(rows);
  dy_.Resize(rows);
  device_->Fill(dy_.data(), rows, 0.0f);
  device_->FmForward(x, x_stride, rows, fields_, dim_, y_.data());
  return y_.data();
}

void FmInteraction::Backward(float* dx, int dx_stride) {
  device_->FmBackward(x_, x_stride_, dy_.data(), rows_, fields_, dim_, dx, dx_stride);
}

}  // namespace herald::worker
