#pragma once
// What a training step's dropout masks are drawn by (MlpSpec.dropout,
// Device::DropoutMask): besides the layer's key, the iteration and each
// row's index in the global batch, so that a sample gets the same mask on
// whichever worker trains it, and in the reference trainer.

#include <cstdint>

#include "common/rng.h"

namespace herald::worker {

struct DropoutDraw {
  bool training = false;  // false: no masks (evaluation, prediction)
  uint64_t iteration = 0;
  // Device memory: each row's index in the global batch; null: the row's
  // own index (a batch that is the whole global batch, in order).
  const uint32_t* samples = nullptr;
};

// The key of the masks of layer `layer` of graph node `node` (its index in
// the spec's list) in a job seeded `seed`.
inline uint64_t DropoutKey(uint64_t seed, uint32_t node, uint32_t layer) {
  return Mix64(seed ^ Mix64((uint64_t{node} << 32) | layer));
}

}  // namespace herald::worker
