#pragma once
// Every dense parameter of a model in one flat device buffer (and its
// gradient in another of the same layout), so that the all-reduce and the
// dense optimizer each make one call per step.
//
// Layers reserve blocks while the model is built, then Initialize() allocates
// and fills them deterministically: block b is a pure function of (seed, b),
// so every worker and the reference trainer start from the same bits.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "worker/device/device.h"
#include "worker/device/device_array.h"

namespace herald::worker {

enum class ParamInit {
  kZero,
  // Glorot/Xavier uniform in ±sqrt(6 / (fan_in + fan_out)).
  kXavierUniform,
};

class DenseParameters {
 public:
  explicit DenseParameters(Device* device) : device_(device) {}

  // Reserves `size` floats; returns the block's offset. REQUIRES: before
  // Initialize().
  size_t Reserve(size_t size, ParamInit init, int fan_in = 0, int fan_out = 0);

  // Allocates values and gradients and fills the values.
  void Initialize(uint64_t seed);
  // Replaces every value (e.g. from a checkpoint or another replica).
  // REQUIRES: values.size() == size().
  void SetValues(const std::vector<float>& values);

  size_t size() const { return size_; }
  float* value(size_t offset) { return values_.data() + offset; }
  float* grad(size_t offset) { return grads_.data() + offset; }
  DeviceArray<float>& values() { return values_; }
  DeviceArray<float>& grads() { return grads_; }

 private:
  struct Block {
    size_t offset;
    size_t size;
    ParamInit init;
    int fan_in;
    int fan_out;
  };

  Device* device_;
  std::vector<Block> blocks_;
  size_t size_ = 0;
  DeviceArray<float> values_;
  DeviceArray<float> grads_;
};

}  // namespace herald::worker
