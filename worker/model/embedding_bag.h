#pragma once
// Embedding bag over cache slots: for sample i, pools (sum or mean) the rows
// of its slots (multi-hot: any number, 0 gives zeros). Writes straight into a
// column block of the caller's feature matrix; backward ADDS per-slot
// gradients into a slot-indexed gradient array, samples in order, so the
// result is deterministic for repeated slots.

#include <cstdint>

#include "worker/device/device.h"

namespace herald::worker {

struct EmbeddingBagInput {
  const uint32_t* offsets = nullptr;  // device, rows + 1
  const uint32_t* slots = nullptr;    // device, offsets[rows] entries
  const float* cache_rows = nullptr;  // device slot array
  int row_stride = 0;                 // floats per slot (values + optimizer state)
  float* slot_grads = nullptr;        // device, `dim` floats per slot; gradients are added
};

class EmbeddingBag {
 public:
  EmbeddingBag(Device* device, int dim, bool mean) : device_(device), dim_(dim), mean_(mean) {}

  void Forward(const EmbeddingBagInput& in, int rows, float* out, int out_stride) {
    device_->EmbeddingBagForward(in.cache_rows, in.row_stride, in.offsets, in.slots, rows, dim_,
                                 mean_, out, out_stride);
  }
  void Backward(const EmbeddingBagInput& in, int rows, const float* dout, int dout_stride) {
    device_->EmbeddingBagBackward(dout, dout_stride, in.offsets, in.slots, rows, dim_, mean_,
                                  in.slot_grads, dim_);
  }

  int dim() const { return dim_; }

 private:
  Device* device_;
  int dim_;
  bool mean_;
};

}  // namespace herald::worker
