#include "common/math/learning_rate.h"

#include <algorithm>
#include <cmath>

namespace herald::math {

float LearningRateAt(float base, const LearningRateSchedule& s, uint64_t iteration) {
  if (iteration < s.warmup_iterations) {
    return static_cast<float>(double(base) * double(iteration + 1) / double(s.warmup_iterations));
  }
  const uint64_t after = iteration - s.warmup_iterations;
  switch (s.decay) {
    case LearningRateSchedule::Decay::kStep: {
      const uint64_t steps = s.step_every > 0 ? after / s.step_every : 0;
      return static_cast<float>(double(base) * std::pow(double(s.step_factor), double(steps)));
    }
    case LearningRateSchedule::Decay::kCosine: {
      if (s.decay_iterations == 0) return base;
      const double progress =
          double(std::min(after, s.decay_iterations)) / double(s.decay_iterations);
      const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
      return static_cast<float>(double(base) * (s.min_factor + (1.0 - s.min_factor) * cosine));
    }
    default:
      return base;
  }
}

}  // namespace herald::math
