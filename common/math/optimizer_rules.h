#pragma once
// The sparse optimizers' update rules, written once for every device: the
// CPU (sparse_optimizer.cc, used by the PS and the CPU worker) and the CUDA
// kernels (worker/device/cuda/cuda_kernels.cu, which nvcc compiles with this
// header). Each rule is one element's (or one row's scalar) arithmetic, in
// float, in the order written, without fused multiply-add (nvcc
// --fmad=false; the host build targets x86-64 without FMA and
// sparse_optimizer.cc also turns contraction off), so every device gets the
// same bits. The rules themselves are listed in sparse_optimizer.h.

#include <math.h>
#include <stdint.h>

#include "common/host_device.h"
#include "common/math/learning_rate.h"

namespace herald::math {

enum class SparseOptimizerKind { kSgd, kAdagrad, kRowwiseAdagrad, kAdam };

// Plain values (copied by value into kernels).
struct SparseOptimizerConfig {
  SparseOptimizerKind kind = SparseOptimizerKind::kSgd;
  float learning_rate = 0.01f;
  float epsilon = 1e-8f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  // Adagrad accumulators start here (TensorFlow uses 0.1, PyTorch 0).
  float initial_accumulator = 0.0f;
  // How learning_rate changes with the iteration (AtIteration,
  // sparse_optimizer.h); the rules below read learning_rate only.
  LearningRateSchedule schedule;
};

// base^exponent by binary exponentiation in double multiplies (squarings
// and products in a fixed order), rounded to float once, so every device
// gets the same bits — libm's powf differs between glibc and CUDA. Relative
// error below 1e-6 for every uint32 exponent (about exponent · 2^-53 before
// the final rounding).
HERALD_HOST_DEVICE_FN float PowerOf(float base, uint32_t exponent) {
  double result = 1.0;
  double b = base;
  while (exponent != 0) {
    if (exponent & 1u) result = result * b;
    b = b * b;
    exponent >>= 1;
  }
  return static_cast<float>(result);
}

// SGD: w -= lr · g.
HERALD_HOST_DEVICE_FN void SgdRule(const SparseOptimizerConfig& c, float g, float* w) {
  *w = *w - c.learning_rate * g;
}

// Adagrad: acc += g²; w -= lr · g / (√acc + ε).
HERALD_HOST_DEVICE_FN void AdagradRule(const SparseOptimizerConfig& c, float g, float* w,
                                       float* acc) {
  *acc = *acc + g * g;
  *w = *w - c.learning_rate * g / (sqrtf(*acc) + c.epsilon);
}

// Row-wise Adagrad's denominator of a row with accumulator acc: √acc + ε.
HERALD_HOST_DEVICE_FN float RowwiseAdagradDenominator(const SparseOptimizerConfig& c, float acc) {
  return sqrtf(acc) + c.epsilon;
}

// Row-wise Adagrad, once per row: acc += Σg² / dim (sum_sq: the squares
// added in index order); returns the row's new denominator.
HERALD_HOST_DEVICE_FN float RowwiseAdagradAccumulate(const SparseOptimizerConfig& c, float sum_sq,
                                                     uint32_t dim, float* acc) {
  *acc = *acc + sum_sq / static_cast<float>(dim);
  return RowwiseAdagradDenominator(c, *acc);
}

// Row-wise Adagrad, per element: w -= lr · g / denominator.
HERALD_HOST_DEVICE_FN void RowwiseAdagradRule(const SparseOptimizerConfig& c, float g,
                                              float denominator, float* w) {
  *w = *w - c.learning_rate * g / denominator;
}

// Adam's bias corrections for `step` (the step after this update, ≥ 1):
// 1 - β1^step and 1 - β2^step.
struct AdamBias {
  float first;
  float second;
};
HERALD_HOST_DEVICE_FN AdamBias AdamBiasAt(const SparseOptimizerConfig& c, uint32_t step) {
  return {1.0f - PowerOf(c.beta1, step), 1.0f - PowerOf(c.beta2, step)};
}

// Adam, per element: m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
// w -= lr · (m / bias.first) / (√(v / bias.second) + ε).
HERALD_HOST_DEVICE_FN void AdamRule(const SparseOptimizerConfig& c, AdamBias bias, float g,
                                    float* w, float* m, float* v) {
  *m = c.beta1 * *m + (1.0f - c.beta1) * g;
  *v = c.beta2 * *v + (1.0f - c.beta2) * (g * g);
  const float m_hat = *m / bias.first;
  const float v_hat = *v / bias.second;
  *w = *w - c.learning_rate * m_hat / (sqrtf(v_hat) + c.epsilon);
}

}  // namespace herald::math
