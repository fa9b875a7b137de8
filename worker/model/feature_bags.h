#pragma once
// A table's per-sample slot lists split into the bags of the features that
// look it up: the lists a model's features pool (rec_model.h).

#include <cstdint>
#include <vector>

namespace herald::worker {

// One feature's bags, CSR: sample i uses slots[offsets[i] .. offsets[i + 1]).
struct FeatureBags {
  std::vector<uint32_t> offsets;  // n + 1
  std::vector<uint32_t> slots;
  std::vector<float> weights;  // each slot entry's; empty: each weighs 1
};

// `offsets` (n + 1) and `slots`: the table's lists; `lengths`: per sample,
// each of `features` features' slot count, in feature order (a sample's
// slots are its features' back to back); `weights`: each slot entry's, or
// empty (then every bag's are too). Writes `features` bags to `out`.
// REQUIRES: features ≥ 1; lengths has n × features entries that sum, per
// sample, to its slot count (the step decoder checks it).
void SplitFeatures(const std::vector<uint32_t>& offsets, const std::vector<uint32_t>& slots,
                   uint32_t features, const std::vector<uint32_t>& lengths,
                   const std::vector<float>& weights, std::vector<FeatureBags>* out);

}  // namespace herald::worker
