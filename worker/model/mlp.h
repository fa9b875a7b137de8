#pragma once
// A stack of Linear layers, each followed by ReLU except (optionally) the
// last, or by nothing (conventions: linear.h).

#include <functional>
#include <memory>
#include <vector>

#include "worker/device/device_array.h"
#include "worker/model/dropout.h"
#include "worker/model/linear.h"
#include "worker/model/relu.h"

namespace herald::worker {

class Mlp {
 public:
  // widths: output width of each layer, in order. REQUIRES: non-empty.
  // relu_hidden = false: no ReLU at all, however relu_after_last is set.
  Mlp(Device* device, DenseParameters* params, int in, const std::vector<int>& widths,
      bool relu_after_last, bool relu_hidden = true);

  // Inverted dropout with probability p on every layer's output but the
  // last's (after its activation), its masks keyed by DropoutKey(seed,
  // node, layer). REQUIRES: 0 < p < 1, before the first Forward.
  void SetDropout(float p, uint64_t seed, uint32_t node);

  // `draw`: the training step's masks (null, or not training: none).
  const float* Forward(const float* x, int x_stride, int rows, const DropoutDraw* draw = nullptr);
  // `final_from` (may be empty): after each layer's backward, the offset
  // of its first parameter; its parameters' gradients and those of the
  // layers above are final from there on (they were reserved in order).
  void Backward(float* dx, int dx_stride,
                const std::function<void(size_t begin)>& final_from = nullptr);

  int out() const { return linears_.back()->out(); }
  const float* output() const;
  float* output_grad();

 private:
  std::vector<std::unique_ptr<Linear>> linears_;
  std::vector<std::unique_ptr<Relu>> relus_;  // relus_[i] follows linears_[i]
  Device* device_;
  float dropout_ = 0;
  uint64_t seed_ = 0;
  uint32_t node_ = 0;
  bool dropped_ = false;  // the last Forward applied masks
  int rows_ = 0;
  // Per layer but the last: its mask and its output after the mask.
  std::vector<DeviceArray<float>> masks_, dropped_outputs_;
};

}  // namespace herald::worker
