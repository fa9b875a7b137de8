#pragma once
// Embedding bag over cache slots: for sample i, pools (sum, mean or sqrt-n; each row times its
// weight where the data has per-id weights) the rows of its slots (multi-hot: any number, 0 gives
// zeros). Writes straight into a column block of the caller's feature matrix; backward ADDS
// per-slot gradients into a slot-indexed gradient array, samples in order, so the result is
// deterministic for repeated slots.

#include <cstdint>

#include "worker/device/device.h"

namespace herald::worker {

struct EmbeddingBagInput {
  const uint32_t* offsets = nullptr;  // device, rows + 1
  const uint32_t* slots = nullptr;    // device, offsets[rows] entries
  const float* cache_rows = nullptr;  // device slot array
  int row_stride = 0;                 // floats per slot (values + optimizer state)
  float* slot_grads = nullptr;        // device, `dim` floats per slot; gradients are added
  uint32_t entries = 0;               // offsets[rows], as the host knows it
  uint32_t capacity = 0;              // slots in cache_rows (0: unknown)
  const float* weights = nullptr;     // device, per entry; null: each weighs 1
};

class EmbeddingBag {
 public:
  EmbeddingBag(Device* device, int dim, Pooling pooling)
      : device_(device), dim_(dim), pooling_(pooling) {}

  void Forward(const EmbeddingBagInput& in, int rows, float* out, int out_stride) {
    device_->EmbeddingBagForward(in.cache_rows, in.row_stride, in.offsets, in.slots, in.weights,
                                 rows, dim_, pooling_, out, out_stride);
  }
  void Backward(const EmbeddingBagInput& in, int rows, const float* dout, int dout_stride) {
    device_->EmbeddingBagBackward(dout, dout_stride, in.offsets, in.slots, in.weights, rows, dim_,
                                  pooling_, in.slot_grads, dim_);
  }

  // This table's part of a model's batched call (Device::EmbeddingBags…).
  Device::BagTable Table(const EmbeddingBagInput& in, int column) const {
    Device::BagTable t;
    t.rows = in.cache_rows;
    t.row_stride = in.row_stride;
    t.offsets = in.offsets;
    t.slots = in.slots;
    t.weights = in.weights;
    t.entries = in.entries;
    t.capacity = in.capacity;
    t.dim = dim_;
    t.pooling = pooling_;
    t.grads = in.slot_grads;
    t.column = column;
    return t;
  }

  int dim() const { return dim_; }

 private:
  Device* device_;
  int dim_;
  Pooling pooling_;
};

}  // namespace herald::worker
