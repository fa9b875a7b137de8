#pragma once
// A batch with categorical features as raw keys (before any cache slot is
// assigned): the input of the reference trainer and of test planners.

#include <cstdint>
#include <vector>

#include "common/ids.h"

namespace herald::data {

struct KeyBatch {
  uint32_t num_samples = 0;
  // Every label column of the data, sample by sample: labels[s · num_labels
  // + j] is sample s's label j (data-formats.md, "Schemas"; Criteo: one).
  uint32_t num_labels = 1;
  std::vector<float> labels;  // num_samples × num_labels
  std::vector<float> dense;   // num_samples × num_dense
  struct Table {
    std::vector<uint32_t> offsets{0};  // num_samples + 1
    std::vector<Key> keys;
    // Each key's weight (data with per-id weights); empty: each weighs 1.
    std::vector<float> weights;
    // Features looking this table up. Above 1: per sample, each feature's
    // key count in feature order (num_samples × features); a sample's keys
    // are its features' back to back. Empty for one feature.
    uint32_t features = 1;
    std::vector<uint32_t> feature_lengths;
  };
  std::vector<Table> tables;

  // Samples [begin, end) as a batch of their own.
  KeyBatch Slice(uint32_t begin, uint32_t end, uint32_t num_dense) const;
};

}  // namespace herald::data
