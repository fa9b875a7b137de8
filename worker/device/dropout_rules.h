#pragma once
// Dropout masks, written once for the CPU (cpu_device.cc) and the CUDA
// kernels (cuda/cuda_kernels.cu): both draw the same Philox bits
// (common/philox.h) and so the same masks, bit for bit.
//
// Units 4b … 4b+3 of a sample take the four words of
//   Philox4x32((b, sample, iteration low, iteration high), key);
// unit u is dropped when (word >> 8) / 2^24 < p, else scaled by keep_scale
// (1 / (1 − p), computed once by the caller).

#include <stdint.h>

#include "common/host_device.h"
#include "common/philox.h"

namespace herald::worker {

// The Philox words of units 4·block … 4·block + 3 of `sample`.
HERALD_HOST_DEVICE_FN PhiloxBlock DropoutBits(uint64_t key, uint64_t iteration, uint32_t sample,
                                              uint32_t block) {
  return PhiloxRounds(PhiloxBlock{{block, sample, static_cast<uint32_t>(iteration),
                                   static_cast<uint32_t>(iteration >> 32)}},
                      static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32));
}

// A unit's mask value from its word: 0 (dropped) or keep_scale.
HERALD_HOST_DEVICE_FN float DropoutScaleOf(uint32_t word, float p, float keep_scale) {
  return static_cast<float>(word >> 8) * (1.0f / 16777216.0f) < p ? 0.0f : keep_scale;
}

}  // namespace herald::worker
