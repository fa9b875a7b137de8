#pragma once
// A batch's bags, one input per feature of a model, on the device, from
// each table's host lists: a table one feature looks up gives its lists as
// they are; a table several features look up is split into theirs
// (feature_bags.h), once per batch. The reference trainer and the held-out
// scorer build their ModelInput here.

#include <cstdint>
#include <vector>

#include "worker/device/device_array.h"
#include "worker/model/feature_bags.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

// One table's host lists of a batch: bags over its slots (CSR), with
// several features each sample's per-feature lengths, and per-entry
// weights (empty: none).
struct TableLists {
  const std::vector<uint32_t>* offsets = nullptr;
  const std::vector<uint32_t>* slots = nullptr;
  uint32_t features = 1;
  const std::vector<uint32_t>* lengths = nullptr;  // n × features when features > 1
  const std::vector<float>* weights = nullptr;     // null or empty: none
};

class FeatureInputs {
 public:
  FeatureInputs(Device* device, const ModelShape& shape);

  // Copies every feature's bags to the device: `tables` by table id. Entry
  // f of the result is feature f's offsets, slots, weights (null without)
  // and entry count; the caller adds its table's rows and gradients.
  const std::vector<EmbeddingBagInput>& Upload(const std::vector<TableLists>& tables);

 private:
  struct Arrays {
    DeviceArray<uint32_t> offsets, slots;
    DeviceArray<float> weights;
  };
  const ModelShape& shape_;
  std::vector<Arrays> arrays_;                    // per feature
  std::vector<std::vector<FeatureBags>> splits_;  // per table several features share
  std::vector<EmbeddingBagInput> inputs_;
};

}  // namespace herald::worker
