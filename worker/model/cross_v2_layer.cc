#include "worker/model/cross_v2_layer.h"

namespace herald::worker {

CrossV2Layer::CrossV2Layer(Device* device, DenseParameters* params, int width, int rank)
    : device_(device), params_(params), width_(width), rank_(rank) {
  if (rank_ > 0) {
    v_ = params->Reserve(static_cast<size_t>(width) * rank, ParamInit::kXavierUniform, width, rank);
    u_ = params->Reserve(static_cast<size_t>(rank) * width, ParamInit::kXavierUniform, rank, width);
  } else {
    u_ = params->Reserve(static_cast<size_t>(width) * width, ParamInit::kXavierUniform, width,
                         width);
  }
  bias_ = params->Reserve(width, ParamInit::kZero);
  for (auto* a : {&t_, &dt_, &u_out_, &du_, &y_, &dy_}) a->Bind(device);
}

const float* CrossV2Layer::Forward(const float* x0, int x0_stride, const float* xl, int xl_stride,
                                   int rows) {
  x0_ = x0;
  xl_ = xl;
  x0_stride_ = x0_stride;
  xl_stride_ = xl_stride;
  rows_ = rows;
  const size_t cells = static_cast<size_t>(rows) * width_;
  u_out_.Resize(cells);
  du_.Resize(cells);
  y_.Resize(cells);
  dy_.Resize(cells);
  device_->Fill(dy_.data(), dy_.size(), 0.0f);
  if (rank_ > 0) {
    t_.Resize(static_cast<size_t>(rows) * rank_);
    dt_.Resize(t_.size());
    device_->Gemm(false, false, rows, rank_, width_, 1.0f, xl, xl_stride, params_->value(v_), rank_,
                  0.0f, t_.data(), rank_);
    device_->Gemm(false, false, rows, width_, rank_, 1.0f, t_.data(), rank_, params_->value(u_),
                  width_, 0.0f, u_out_.data(), width_);
  } else {
    device_->Gemm(false, false, rows, width_, width_, 1.0f, xl, xl_stride, params_->value(u_),
                  width_, 0.0f, u_out_.data(), width_);
  }
  device_->AddRowVector(params_->value(bias_), rows, width_, u_out_.data());
  // y = xl + x0 ⊙ u.
  device_->Copy2D(xl, xl_stride, rows, width_, y_.data(), width_);
  device_->Multiply2D(x0, x0_stride, u_out_.data(), width_, rows, width_, y_.data(), width_,
                      /*accumulate=*/true);
  return y_.data();
}

void CrossV2Layer::Backward(float* dx0, int dx0_stride, float* dxl, int dxl_stride) {
  // du = dy ⊙ x0; db = Σ du; dW = xlᵀ·du (full) or dU = tᵀ·du, dt = du·Uᵀ,
  // dV = xlᵀ·dt (low rank).
  device_->Multiply2D(dy_.data(), width_, x0_, x0_stride_, rows_, width_, du_.data(), width_,
                      /*accumulate=*/false);
  device_->SumRows(du_.data(), rows_, width_, params_->grad(bias_));
  if (rank_ > 0) {
    device_->Gemm(true, false, rank_, width_, rows_, 1.0f, t_.data(), rank_, du_.data(), width_,
                  0.0f, params_->grad(u_), width_);
    device_->Gemm(false, true, rows_, rank_, width_, 1.0f, du_.data(), width_, params_->value(u_),
                  width_, 0.0f, dt_.data(), rank_);
    device_->Gemm(true, false, width_, rank_, rows_, 1.0f, xl_, xl_stride_, dt_.data(), rank_, 0.0f,
                  params_->grad(v_), rank_);
  } else {
    device_->Gemm(true, false, width_, width_, rows_, 1.0f, xl_, xl_stride_, du_.data(), width_,
                  0.0f, params_->grad(u_), width_);
  }
  if (dx0 != nullptr) {
    // dx0 += dy ⊙ u
    device_->Multiply2D(dy_.data(), width_, u_out_.data(), width_, rows_, width_, dx0, dx0_stride,
                        /*accumulate=*/true);
  }
  if (dxl != nullptr) {
    // dxl += dy + du·Wᵀ (or dt·Vᵀ)
    device_->Add2D(dy_.data(), width_, rows_, width_, dxl, dxl_stride);
    if (rank_ > 0) {
      device_->Gemm(false, true, rows_, width_, rank_, 1.0f, dt_.data(), rank_, params_->value(v_),
                    rank_, 1.0f, dxl, dxl_stride);
    } else {
      device_->Gemm(false, true, rows_, width_, width_, 1.0f, du_.data(), width_,
                    params_->value(u_), width_, 1.0f, dxl, dxl_stride);
    }
  }
}

}  // namespace herald::worker
