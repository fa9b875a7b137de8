#include "worker/model/feature_bags.h"

#include <cstddef>

namespace herald::worker {

void SplitFeatures(const std::vector<uint32_t>& offsets, const std::vector<uint32_t>& slots,
                   uint32_t features, const std::vector<uint32_t>& lengths,
                   const std::vector<float>& weights, std::vector<FeatureBags>* out) {
  const size_t n = offsets.empty() ? 0 : offsets.size() - 1;
  out->resize(features);
  for (FeatureBags& bags : *out) {
    bags.offsets.assign(1, 0);
    bags.offsets.reserve(n + 1);
    bags.slots.clear();
    bags.weights.clear();
  }
  for (size_t s = 0; s < n; ++s) {
    uint32_t at = offsets[s];
    for (uint32_t f = 0; f < features; ++f) {
      FeatureBags& bags = (*out)[f];
      const uint32_t len = features == 1 ? offsets[s + 1] - offsets[s] : lengths[s * features + f];
      bags.slots.insert(bags.slots.end(), slots.begin() + at, slots.begin() + at + len);
      if (!weights.empty()) {
        bags.weights.insert(bags.weights.end(), weights.begin() + at, weights.begin() + at + len);
      }
      bags.offsets.push_back(static_cast<uint32_t>(bags.slots.size()));
      at += len;
    }
  }
}

}  // namespace herald::worker
