#include "worker/model/mlp.h"

namespace herald::worker {

Mlp::Mlp(Device* device, DenseParameters* params, int in, const std::vector<int>& widths,
         bool relu_after_last, bool relu_hidden) {
  for (size_t i = 0; i < widths.size(); ++i) {
    linears_.push_back(std::make_unique<Linear>(device, params, in, widths[i]));
    if (relu_hidden && (i + 1 < widths.size() || relu_after_last)) {
      relus_.push_back(std::make_unique<Relu>(device, widths[i]));
    }
    in = widths[i];
  }
}

const float* Mlp::Forward(const float* x, int x_stride, int rows) {
  const float* h = x;
  int stride = x_stride;
  for (size_t i = 0; i < linears_.size(); ++i) {
    h = linears_[i]->Forward(h, stride, rows);
    if (i < relus_.size()) h = relus_[i]->Forward(h, rows);
    stride = linears_[i]->out();
  }
  return h;
}

void Mlp::Backward(float* dx, int dx_stride) {
  for (size_t i = linears_.size(); i-- > 0;) {
    if (i < relus_.size()) relus_[i]->Backward(linears_[i]->output_grad());
    float* below = i > 0 ? (i - 1 < relus_.size() ? relus_[i - 1]->output_grad()
                                                  : linears_[i - 1]->output_grad())
                         : dx;
    linears_[i]->Backward(below, i > 0 ? linears_[i - 1]->out() : dx_stride);
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
