#include "worker/model/dense_optimizer.h"

#include <vector>

#include "common/math/optimizer_spec.h"

namespace herald::worker {

absl::StatusOr<DenseOptimizer> DenseOptimizer::Create(const proto::OptimizerSpec& spec,
                                                      Device* device, size_t num_params) {
  auto config = math::SparseOptimizerFromSpec(spec, "dense_optimizer");
  if (!config.ok()) return config.status();
  if (config->kind == math::SparseOptimizerKind::kRowwiseAdagrad) {
    return absl::InvalidArgumentError(
        "dense_optimizer.kind: row-wise Adagrad applies to embedding rows only; use SGD, "
        "Adagrad or Adam");
  }
  return DenseOptimizer(*config, spec.weight_decay(), device, num_params);
}

DenseOptimizer::DenseOptimizer(math::SparseOptimizerConfig config, float weight_decay,
                               Device* device, size_t num_params)
    : config_(config), weight_decay_(weight_decay), device_(device), num_params_(num_params) {
  const uint32_t state_floats = math::StateFloats(config.kind, static_cast<uint32_t>(num_params));
  std::vector<float> state(state_floats);
  math::InitOptimizerState(config, static_cast<uint32_t>(num_params), state.data());
  state_.Bind(device);
  state_.CopyFromHost(state);
}

void DenseOptimizer::Step(DenseParameters& params, uint64_t iteration) {
  if (weight_decay_ != 0) {
    device_->Axpy(num_params_, weight_decay_, params.values().data(), params.grads().data());
  }
  device_->ApplyOptimizer(math::AtIteration(config_, iteration), num_params_, params.grads().data(),
                          params.values().data(), state_.data());
}

}  // namespace herald::worker
