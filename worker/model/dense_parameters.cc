#include "worker/model/dense_parameters.h"

#include <cmath>

#include "common/rng.h"

namespace herald::worker {
namespace {

// CounterRng stream for dense initialisation (embedding rows use their own).
constexpr uint64_t kDenseInitStream = 0xde115e;

}  // namespace

size_t DenseParameters::Reserve(size_t size, ParamInit init, int fan_in, int fan_out) {
  const size_t offset = size_;
  blocks_.push_back({offset, size, init, fan_in, fan_out});
  size_ += size;
  return offset;
}

void DenseParameters::Initialize(uint64_t seed) {
  values_.Bind(device_);
  grads_.Bind(device_);
  std::vector<float> host(size_, 0.0f);
  for (size_t b = 0; b < blocks_.size(); ++b) {
    const Block& block = blocks_[b];
    if (block.init != ParamInit::kXavierUniform) continue;
    const float limit = std::sqrt(6.0f / static_cast<float>(block.fan_in + block.fan_out));
    CounterRng rng(seed, kDenseInitStream, b);
    for (size_t i = 0; i < block.size; ++i) {
      host[block.offset + i] = (2.0f * rng.NextFloat() - 1.0f) * limit;
    }
  }
  values_.CopyFromHost(host);
  grads_.Resize(size_);
}

void DenseParameters::SetValues(const std::vector<float>& values) { values_.CopyFromHost(values); }

}  // namespace herald::worker
