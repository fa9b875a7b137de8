#include "worker/model/linear.h"

namespace herald::worker {

Linear::Linear(Device* device, DenseParameters* params, int in, int out)
    : device_(device), params_(params), in_(in), out_(out) {
  weight_ = params->Reserve(static_cast<size_t>(in) * out, ParamInit::kXavierUniform, in, out);
  bias_ = params->Reserve(out, ParamInit::kZero);
  y_.Bind(device);
  dy_.Bind(device);
}

const float* Linear::Forward(const float* x, int x_stride, int rows) {
  x_ = x;
  x_stride_ = x_stride;
  rows_ = rows;
  y_.Resize(static_cast<size_t>(rows) * out_);
  dy_.Resize(y_.size());
  device_->Fill(dy_.data(), dy_.size(), 0.0f);
  device_->Gemm(false, false, rows, out_, in_, 1.0f, x, x_stride, params_->value(weight_), out_,
                0.0f, y_.data(), out_);
  device_->AddRowVector(params_->value(bias_), rows, out_, y_.data());
  return y_.data();
}

void Linear::Backward(float* dx, int dx_stride) {
  // dW = xᵀ·dy, db = Σ_rows dy, dx += dy·Wᵀ.
  device_->Gemm(true, false, in_, out_, rows_, 1.0f, x_, x_stride_, dy_.data(), out_, 0.0f,
                params_->grad(weight_), out_);
  device_->SumRows(dy_.data(), rows_, out_, params_->grad(bias_));
  if (dx != nullptr) {
    device_->Gemm(false, true, rows_, in_, out_, 1.0f, dy_.data(), out_, params_->value(weight_),
                  out_, 1.0f, dx, dx_stride);
  }
}

}  // namespace herald::worker
