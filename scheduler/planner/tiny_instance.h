#pragma once
// Tiny scheduling instances for the exhaustive-search yardstick: K global
// batches of one sample per worker, one key per table per sample, drawn from
// small skewed vocabularies so that caches, reuse and conflicts all matter.
//
//   kIndependent  each table's key drawn on its own: key = ⌊V·u²⌋ (skewed
//                 towards small keys), u uniform
//   kEntity       each sample belongs to one of `entities` entities (drawn
//                 skewed the same way); with probability 0.8 a table's key is
//                 the entity's own key for that table, otherwise independent
//
// Deterministic in (options, seed).

#include <cstdint>
#include <vector>

#include "common/data/key_batch.h"

namespace herald::scheduler {

enum class TinyKind { kIndependent, kEntity };

struct TinyInstanceOptions {
  TinyKind kind = TinyKind::kIndependent;
  uint32_t workers = 2;
  uint32_t batches = 4;
  uint32_t tables = 3;
  uint32_t vocabulary = 8;  // keys per table
  uint32_t entities = 6;    // kEntity only
  uint64_t seed = 1;
};

std::vector<data::KeyBatch> MakeTinyInstance(const TinyInstanceOptions& options);

}  // namespace herald::scheduler
