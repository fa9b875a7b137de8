#pragma once
// The element-by-element operations of a Device, written once for the CPU
// (cpu_device.cc) and the CUDA kernels (cuda/cuda_kernels.cu, which nvcc
// compiles with this header): the same float expressions in the same
// order, without fused multiply-add (nvcc --fmad=false; the host build
// targets x86-64 without FMA), so the devices agree bit for bit except
// where the C library's exp and log1p differ (glibc and CUDA's, a few ulp).

#include <math.h>

#include "common/host_device.h"

namespace herald::worker {

HERALD_HOST_DEVICE_FN float ReluOf(float x) { return x > 0.0f ? x : 0.0f; }

// The gradient ReLU passes back given its output y.
HERALD_HOST_DEVICE_FN float ReluGradient(float y, float dy) { return y > 0.0f ? dy : 0.0f; }

HERALD_HOST_DEVICE_FN float SigmoidOf(float x) { return 1.0f / (1.0f + expf(-x)); }

// Binary cross-entropy of logit z against label y, as max(z, 0) − z·y +
// log(1 + exp(−|z|)) (no overflow for any z), and its gradient
// (sigmoid(z) − y) · grad_scale.
HERALD_HOST_DEVICE_FN void SigmoidCrossEntropyOf(float z, float y, float grad_scale, float* loss,
                                                 float* dlogit) {
  *loss = fmaxf(z, 0.0f) - z * y + log1pf(expf(-fabsf(z)));
  *dlogit = (SigmoidOf(z) - y) * grad_scale;
}

// Squared error of output o against label y, and its gradient
// (2 · (o − y)) · grad_scale.
HERALD_HOST_DEVICE_FN void SquaredErrorOf(float o, float y, float grad_scale, float* loss,
                                          float* doutput) {
  const float e = o - y;
  *loss = e * e;
  *doutput = (2.0f * e) * grad_scale;
}

// The FM second-order interaction of one row of `fields` vectors of `dim`
// floats (row[f * dim + k]): ½ Σ_k ((Σ_f v)² − Σ_f v²), k and f ascending.
HERALD_HOST_DEVICE_FN float FmOfRow(const float* row, int fields, int dim) {
  float total = 0.0f;
  for (int k = 0; k < dim; ++k) {
    float sum = 0.0f, sum_sq = 0.0f;
    for (int f = 0; f < fields; ++f) {
      const float v = row[f * dim + k];
      sum += v;
      sum_sq += v * v;
    }
    total += sum * sum - sum_sq;
  }
  return 0.5f * total;
}

}  // namespace herald::worker
