#include "worker/model/feature_inputs.h"

namespace herald::worker {

FeatureInputs::FeatureInputs(Device* device, const ModelShape& shape)
    : shape_(shape), arrays_(shape.tables.size()) {
  for (Arrays& a : arrays_) {
    a.offsets.Bind(device);
    a.slots.Bind(device);
    a.weights.Bind(device);
  }
}

const std::vector<EmbeddingBagInput>& FeatureInputs::Upload(const std::vector<TableLists>& tables) {
  static const std::vector<float> kNoWeights;
  splits_.resize(tables.size());
  inputs_.assign(shape_.tables.size(), EmbeddingBagInput());
  for (size_t f = 0; f < shape_.tables.size(); ++f) {
    const TableShape& feature = shape_.tables[f];
    const TableLists& table = tables[feature.table];
    const std::vector<uint32_t>* offsets = table.offsets;
    const std::vector<uint32_t>* slots = table.slots;
    const std::vector<float>* weights = table.weights ? table.weights : &kNoWeights;
    if (table.features > 1) {
      std::vector<FeatureBags>& split = splits_[feature.table];
      if (feature.index_in_table == 0) {  // the table's first feature: split once
        SplitFeatures(*table.offsets, *table.slots, table.features, *table.lengths, *weights,
                      &split);
      }
      const FeatureBags& bags = split[feature.index_in_table];
      offsets = &bags.offsets;
      slots = &bags.slots;
      weights = &bags.weights;
    }
    Arrays& a = arrays_[f];
    a.offsets.CopyFromHost(*offsets);
    a.slots.CopyFromHost(*slots);
    a.weights.CopyFromHost(*weights);
    EmbeddingBagInput& in = inputs_[f];
    in.offsets = a.offsets.data();
    in.slots = a.slots.data();
    in.entries = static_cast<uint32_t>(slots->size());
    if (table.weights != nullptr && !table.weights->empty()) in.weights = a.weights.data();
  }
  return inputs_;
}

}  // namespace herald::worker
