#pragma once
// The dense optimizer: one step of SGD, Adagrad or Adam over every dense
// parameter at once, with the same math as the sparse rows (common/math),
// run on the device, with the spec's learning-rate schedule and L2 weight
// decay. Every replica applies it to the same all-reduced
// gradient, so replicas stay bit-identical.

#include "absl/status/statusor.h"
#include "common/math/sparse_optimizer.h"
#include "proto/job.pb.h"
#include "worker/device/device_array.h"
#include "worker/model/dense_parameters.h"

namespace herald::worker {

class DenseOptimizer {
 public:
  // Errors: InvalidArgument naming `dense_optimizer.<field>` (row-wise
  // Adagrad is for embedding rows only).
  static absl::StatusOr<DenseOptimizer> Create(const proto::OptimizerSpec& spec, Device* device,
                                               size_t num_params);

  // values ← step(values, grads + weight_decay · values) at `iteration`'s
  // learning rate (the spec's schedule). Adds the decay into grads.
  void Step(DenseParameters& params, uint64_t iteration);

  const math::SparseOptimizerConfig& config() const { return config_; }
  // The optimizer state (e.g. for checkpoints).
  DeviceArray<float>& state() { return state_; }

 private:
  DenseOptimizer(math::SparseOptimizerConfig config, float weight_decay, Device* device,
                 size_t num_params);

  math::SparseOptimizerConfig config_;
  float weight_decay_;
  Device* device_;
  size_t num_params_;
  DeviceArray<float> state_;
};

}  // namespace herald::worker
