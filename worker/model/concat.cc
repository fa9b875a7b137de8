#include "worker/model/concat.h"

namespace herald::worker {

Concat::Concat(Device* device, std::vector<int> widths)
    : device_(device), widths_(std::move(widths)) {
  for (int w : widths_) out_ += w;
  y_.Bind(device);
  dy_.Bind(device);
}

const float* Concat::Forward(const std::vector<Input>& inputs, int rows) {
  rows_ = rows;
  y_.Resize(static_cast<size_t>(rows) * out_);
  dy_.Resize(y_.size());
  device_->Fill(dy_.data(), dy_.size(), 0.0f);
  int column = 0;
  for (size_t i = 0; i < widths_.size(); ++i) {
    device_->Copy2D(inputs[i].data, inputs[i].stride, rows, widths_[i], y_.data() + column, out_);
    column += widths_[i];
  }
  return y_.data();
}

void Concat::Backward(const std::vector<InputGrad>& grads) {
  int column = 0;
  for (size_t i = 0; i < widths_.size(); ++i) {
    if (grads[i].data != nullptr) {
      device_->Add2D(dy_.data() + column, out_, rows_, widths_[i], grads[i].data, grads[i].stride);
    }
    column += widths_[i];
  }
}

}  // namespace herald::worker
