#include "worker/model/mlp.h"

namespace herald::worker {

Mlp::Mlp(Device* device, DenseParameters* params, int in, const std::vector<int>& widths,
         bool relu_after_last, bool relu_hidden)
    : device_(device) {
  for (size_t i = 0; i < widths.size(); ++i) {
    linears_.push_back(std::make_unique<Linear>(device, params, in, widths[i]));
    if (relu_hidden && (i + 1 < widths.size() || relu_after_last)) {
      relus_.push_back(std::make_unique<Relu>(device, widths[i]));
    }
    in = widths[i];
  }
}

void Mlp::SetDropout(float p, uint64_t seed, uint32_t node) {
  dropout_ = p;
  seed_ = seed;
  node_ = node;
  masks_.resize(linears_.size() - 1);
  dropped_outputs_.resize(linears_.size() - 1);
  for (size_t i = 0; i + 1 < linears_.size(); ++i) {
    masks_[i].Bind(device_);
    dropped_outputs_[i].Bind(device_);
  }
}

const float* Mlp::Forward(const float* x, int x_stride, int rows, const DropoutDraw* draw) {
  dropped_ = dropout_ > 0 && draw != nullptr && draw->training;
  rows_ = rows;
  const float* h = x;
  int stride = x_stride;
  for (size_t i = 0; i < linears_.size(); ++i) {
    h = linears_[i]->Forward(h, stride, rows);
    if (i < relus_.size()) h = relus_[i]->Forward(h, rows);
    stride = linears_[i]->out();
    if (dropped_ && i + 1 < linears_.size()) {
      const size_t size = static_cast<size_t>(rows) * stride;
      masks_[i].Resize(size);
      dropped_outputs_[i].Resize(size);
      device_->DropoutMask(DropoutKey(seed_, node_, static_cast<uint32_t>(i)), draw->iteration,
                           draw->samples, rows, stride, dropout_, masks_[i].data());
      device_->Multiply2D(h, stride, masks_[i].data(), stride, rows, stride,
                          dropped_outputs_[i].data(), stride, /*accumulate=*/false);
      h = dropped_outputs_[i].data();
    }
  }
  return h;
}

void Mlp::Backward(float* dx, int dx_stride, const std::function<void(size_t)>& final_from) {
  for (size_t i = linears_.size(); i-- > 0;) {
    // Layer i's output gradient is complete here (the layer above, or the
    // consumer, wrote it); a dropped output passes it through its mask.
    float* dy = i < relus_.size() ? relus_[i]->output_grad() : linears_[i]->output_grad();
    if (dropped_ && i + 1 < linears_.size()) {
      const int width = linears_[i]->out();
      device_->Multiply2D(dy, width, masks_[i].data(), width, rows_, width, dy, width,
                          /*accumulate=*/false);
    }
    if (i < relus_.size()) relus_[i]->Backward(linears_[i]->output_grad());
    float* below = i > 0 ? (i - 1 < relus_.size() ? relus_[i - 1]->output_grad()
                                                  : linears_[i - 1]->output_grad())
                         : dx;
    linears_[i]->Backward(below, i > 0 ? linears_[i - 1]->out() : dx_stride);
    if (final_from) final_from(linears_[i]->first_param());
  }
}

const float* Mlp::output() const {
  return relus_.size() == linears_.size() ? relus_.back()->output() : linears_.back()->output();
}

float* Mlp::output_grad() {
  return relus_.size() == linears_.size() ? relus_.back()->output_grad()
                                          : linears_.back()->output_grad();
}

}  // namespace herald::worker
