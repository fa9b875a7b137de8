#pragma once
// A batch with categorical features as raw keys (before any cache slot is
// assigned): the input of the reference trainer and of test planners.

#include <cstdint>
#include <string>
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
    // Row expiry (scheduler/data/key_lifecycle.h): keys whose rows are
    // deleted once this batch is trained, ascending; none of them is
    // looked up in this batch. Not carried by Slice.
    std::vector<Key> expired;

    // Drops every lookup whose keep(key) is false, as if its id were absent
    // from the sample (offsets, weights and feature lengths follow).
    template <typename Keep>
    void KeepKeys(Keep keep);
  };
  std::vector<Table> tables;
  // A followed directory (data.follow): the files whose first samples were
  // read while this batch was drawn, in name order. Samples of theirs are
  // in this batch or later ones, never in an earlier one. Not carried by
  // Slice.
  std::vector<std::string> files_started;

  // Samples [begin, end) as a batch of their own.
  KeyBatch Slice(uint32_t begin, uint32_t end, uint32_t num_dense) const;
};

template <typename Keep>
void KeyBatch::Table::KeepKeys(Keep keep) {
  const size_t samples = offsets.size() - 1;
  size_t kept = 0, at = 0;
  for (size_t s = 0; s < samples; ++s) {
    // Per feature of the sample (one feature: the whole bag).
    const uint32_t parts = features > 1 ? features : 1;
    for (uint32_t f = 0; f < parts; ++f) {
      const size_t end = features > 1 ? at + feature_lengths[s * features + f] : offsets[s + 1];
      uint32_t kept_here = 0;
      for (; at < end; ++at) {
        if (!keep(keys[at])) continue;
        keys[kept] = keys[at];
        if (!weights.empty()) weights[kept] = weights[at];
        ++kept;
        ++kept_here;
      }
      if (features > 1) feature_lengths[s * features + f] = kept_here;
    }
    offsets[s + 1] = static_cast<uint32_t>(kept);
  }
  keys.resize(kept);
  if (!weights.empty()) weights.resize(kept);
}

}  // namespace herald::data
