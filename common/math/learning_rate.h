#pragma once
// Learning-rate schedules (OptimizerSpec.schedule): a linear warm-up, then
// a constant, step or cosine decay, as a pure function of the iteration, so
// that the PS, every worker and the reference trainer apply the same rate at
// the same iteration (docs/configuration.md, "Learning-rate schedules").

#include <cstdint>

namespace herald::math {

// Plain values (inside SparseOptimizerConfig, copied into kernels).
struct LearningRateSchedule {
  enum class Decay : uint32_t { kConstant, kStep, kCosine };
  uint64_t warmup_iterations = 0;
  Decay decay = Decay::kConstant;
  uint64_t step_every = 0;
  float step_factor = 1.0f;
  uint64_t decay_iterations = 0;
  float min_factor = 0.0f;
};

// The rate at `iteration` (from 0) for base rate `base`, computed in double
// and rounded to float once.
float LearningRateAt(float base, const LearningRateSchedule& schedule, uint64_t iteration);

}  // namespace herald::math
