#pragma once
// Column-wise concatenation of several rows × width_i inputs
// (conventions: linear.h).

#include <vector>

#include "worker/device/device_array.h"

namespace herald::worker {

class Concat {
 public:
  Concat(Device* device, std::vector<int> widths);

  struct Input {
    const float* data;
    int stride;
  };
  struct InputGrad {
    float* data;  // nullptr: not needed
    int stride;
  };

  const float* Forward(const std::vector<Input>& inputs, int rows);
  void Backward(const std::vector<InputGrad>& grads);

  int out() const { return out_; }
  const float* output() const { return y_.data(); }
  float* output_grad() { return dy_.data(); }

 private:
  Device* device_;
  std::vector<int> widths_;
  int out_ = 0;
  int rows_ = 0;
  DeviceArray<float> y_, dy_;
};

}  // namespace herald::worker
