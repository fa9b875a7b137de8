#pragma once
// A stack of Linear layers, each followed by ReLU except (optionally) the
// last, or by nothing (conventions: linear.h).

#include <memory>
#include <vector>

#include "worker/model/linear.h"
#include "worker/model/relu.h"

namespace herald::worker {

class Mlp {
 public:
  // widths: output width of each layer, in order. REQUIRES: non-empty.
  // relu_hidden = false: no ReLU at all, however relu_after_last is set.
  Mlp(Device* device, DenseParameters* params, int in, const std::vector<int>& widths,
      bool relu_after_last, bool relu_hidden = true);

  const float* Forward(const float* x, int x_stride, int rows);
  void Backward(float* dx, int dx_stride);

  int out() const { return linears_.back()->out(); }
  const float* output() const;
  float* output_grad();

 private:
  std::vector<std::unique_ptr<Linear>> linears_;
  std::vector<std::unique_ptr<Relu>> relus_;  // relus_[i] follows linears_[i]
};

}  // namespace herald::worker
