#include "worker/model/cross_layer.h"

namespace herald::worker {

CrossLayer::CrossLayer(Device* device, DenseParameters* params, int width)
    : device_(device), params_(params), width_(width) {
  weight_ = params->Reserve(width, ParamInit::kXavierUniform, width, 1);
  bias_ = params->Reserve(width, ParamInit::kZero);
  for (auto* a : {&s_, &ds_, &y_, &dy_}) a->Bind(device);
}

const float* CrossLayer::Forward(const float* x0, int x0_stride, const float* xl, int xl_stride,
                                 int rows) {
  x0_ = x0;
  xl_ = xl;
  x0_stride_ = x0_stride;
  xl_stride_ = xl_stride;
  rows_ = rows;
  s_.Resize(rows);
  ds_.Resize(rows);
  y_.Resize(static_cast<size_t>(rows) * width_);
  dy_.Resize(y_.size());
  device_->Fill(dy_.data(), dy_.size(), 0.0f);
  // s = xl·w (rows × 1), y = xl + s ⊙ x0 + b.
  device_->Gemm(false, false, rows, 1, width_, 1.0f, xl, xl_stride, params_->value(weight_), 1,
                0.0f, s_.data(), 1);
  device_->Copy2D(xl, xl_stride, rows, width_, y_.data(), width_);
  device_->AddScaledRows(s_.data(), x0, x0_stride, rows, width_, y_.data(), width_);
  device_->AddRowVector(params_->value(bias_), rows, width_, y_.data());
  return y_.data();
}

void CrossLayer::Backward(float* dx0, int dx0_stride, float* dxl, int dxl_stride) {
  // ds = dy·x0 per row; dw = xlᵀ·ds; db = Σ dy.
  device_->RowDots(dy_.data(), width_, x0_, x0_stride_, rows_, width_, ds_.data());
  device_->Gemm(true, false, width_, 1, rows_, 1.0f, xl_, xl_stride_, ds_.data(), 1, 0.0f,
                params_->grad(weight_), 1);
  device_->SumRows(dy_.data(), rows_, width_, params_->grad(bias_));
  if (dx0 != nullptr) {
    device_->AddScaledRows(s_.data(), dy_.data(), width_, rows_, width_, dx0, dx0_stride);
  }
  if (dxl != nullptr) {
    // dxl += dy + ds·wᵀ
    device_->Add2D(dy_.data(), width_, rows_, width_, dxl, dxl_stride);
    device_->Gemm(false, false, rows_, width_, 1, 1.0f, ds_.data(), 1, params_->value(weight_),
                  width_, 1.0f, dxl, dxl_stride);
  }
}

}  // namespace herald::worker
