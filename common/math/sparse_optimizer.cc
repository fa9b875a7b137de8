#include "common/math/sparse_optimizer.h"

#include <cstring>

// Keep the float operations exactly as written (no a*b+c contraction), so the
// PS, the CPU worker and the CUDA kernels (built with --fmad=false) agree bit
// for bit.
#if defined(__GNUC__) && !defined(__clang__)  // clang has no such pragma
#pragma GCC optimize("fp-contract=off")
#endif

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

SparseOptimizerConfig AtIteration(SparseOptimizerConfig config, uint64_t iteration) {
  config.learning_rate = LearningRateAt(config.learning_rate, config.schedule, iteration);
  return config;
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
  switch (c.kind) {
    case SparseOptimizerKind::kSgd:
      for (uint32_t i = 0; i < dim; ++i) SgdRule(c, g[i], &w[i]);
      return;
    case SparseOptimizerKind::kAdagrad:
      for (uint32_t i = 0; i < dim; ++i) AdagradRule(c, g[i], &w[i], &state[i]);
      return;
    case SparseOptimizerKind::kRowwiseAdagrad: {
      float sum_sq = 0.0f;
      for (uint32_t i = 0; i < dim; ++i) sum_sq = sum_sq + g[i] * g[i];
      const float denominator = RowwiseAdagradAccumulate(c, sum_sq, dim, &state[0]);
      for (uint32_t i = 0; i < dim; ++i) RowwiseAdagradRule(c, g[i], denominator, &w[i]);
      return;
    }
    case SparseOptimizerKind::kAdam: {
      float* m = state;
      float* v = state + dim;
      uint32_t step;
      std::memcpy(&step, &state[2 * dim], sizeof(step));
      step += 1;
      std::memcpy(&state[2 * dim], &step, sizeof(step));
      const AdamBias bias = AdamBiasAt(c, step);
      for (uint32_t i = 0; i < dim; ++i) AdamRule(c, bias, g[i], &w[i], &m[i], &v[i]);
      return;
    }
  }
}

}  // namespace herald::math
