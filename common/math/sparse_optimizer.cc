#include "common/math/sparse_optimizer.h"

#include <cmath>
#include <cstring>

// Keep the float operations exactly as written (no a*b+c contraction), so the
// PS, the CPU worker and the CUDA kernels (built with --fmad=false) agree bit
// for bit.
#pragma GCC optimize("fp-contract=off")

namespace herald::math {

uint32_t StateFloats(SparseOptimizerKind kind, uint32_t dim) {
  switch (kind) {
    case SparseOptimizerKind::kSgd:
      return 0;
    case SparseOptimizerKind::kAdagrad:
      return dim;
    case SparseOptimizerKind::kRowwiseAdagrad:
      return 1;
    case SparseOptimizerKind::kAdam:
      return 2 * dim + 1;
  }
  return 0;
}

void InitOptimizerState(const SparseOptimizerConfig& config, uint32_t dim, float* state) {
  switch (config.kind) {
    case SparseOptimizerKind::kSgd:
      return;
    case SparseOptimizerKind::kAdagrad:
      for (uint32_t i = 0; i < dim; ++i) state[i] = config.initial_accumulator;
      return;
    case SparseOptimizerKind::kRowwiseAdagrad:
      state[0] = config.initial_accumulator;
      return;
    case SparseOptimizerKind::kAdam: {
      for (uint32_t i = 0; i < 2 * dim; ++i) state[i] = 0.0f;
      uint32_t step = 0;
      std::memcpy(&state[2 * dim], &step, sizeof(step));
      return;
    }
  }
}

void ApplySparseUpdate(const SparseOptimizerConfig& c, uint32_t dim, const float* g, float* w,
                       float* state) {
  const float lr = c.learning_rate;
  switch (c.kind) {
    case SparseOptimizerKind::kSgd:
      for (uint32_t i = 0; i < dim; ++i) w[i] = w[i] - lr * g[i];
      return;
    case SparseOptimizerKind::kAdagrad:
      for (uint32_t i = 0; i < dim; ++i) {
        state[i] = state[i] + g[i] * g[i];
        w[i] = w[i] - lr * g[i] / (std::sqrt(state[i]) + c.epsilon);
      }
      return;
    case SparseOptimizerKind::kRowwiseAdagrad: {
      float sum_sq = 0.0f;
      for (uint32_t i = 0; i < dim; ++i) sum_sq = sum_sq + g[i] * g[i];
      state[0] = state[0] + sum_sq / static_cast<float>(dim);
      const float denom = std::sqrt(state[0]) + c.epsilon;
      for (uint32_t i = 0; i < dim; ++i) w[i] = w[i] - lr * g[i] / denom;
      return;
    }
    case SparseOptimizerKind::kAdam: {
      float* m = state;
      float* v = state + dim;
      uint32_t step;
      std::memcpy(&step, &state[2 * dim], sizeof(step));
      step += 1;
      std::memcpy(&state[2 * dim], &step, sizeof(step));
      const float bias1 = 1.0f - PowerOf(c.beta1, step);
      const float bias2 = 1.0f - PowerOf(c.beta2, step);
      for (uint32_t i = 0; i < dim; ++i) {
        m[i] = c.beta1 * m[i] + (1.0f - c.beta1) * g[i];
        v[i] = c.beta2 * v[i] + (1.0f - c.beta2) * (g[i] * g[i]);
        const float m_hat = m[i] / bias1;
        const float v_hat = v[i] / bias2;
        w[i] = w[i] - lr * m_hat / (std::sqrt(v_hat) + c.epsilon);
      }
      return;
    }
  }
}

}  // namespace herald::math
