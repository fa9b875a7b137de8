#pragma once
// How an embedding bag pools its rows: their sum times a scale of the bag's
// size. One definition for every device: nvcc compiles it for the GPU too
// (IEEE division and square root, no fast math), so a bag pools to the same
// bits on the CPU and the GPU.

#include <cmath>
#include <cstdint>

#include "common/host_device.h"

namespace herald::worker {

enum class Pooling : int32_t {
  kSum = 0,
  kMean = 1,   // ÷ the bag's size
  kSqrtN = 2,  // ÷ √(the bag's size)
};

// The factor a bag of `n` rows (n > 0) is multiplied by.
HERALD_HOST_DEVICE_FN float PoolingScale(Pooling pooling, uint32_t n) {
  switch (pooling) {
    case Pooling::kMean:
      return 1.0f / static_cast<float>(n);
    case Pooling::kSqrtN:
      return 1.0f / sqrtf(static_cast<float>(n));
    default:
      return 1.0f;
  }
}

}  // namespace herald::worker
