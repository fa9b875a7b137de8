#pragma once
// Seeded global batches for training tests (testonly): labels 30% positive,
// uniform dense features, and per table skewed keys (key = ⌊keys·u²⌋ +
// 1000·t, u uniform) so rows are owned, shared, evicted and handed between
// workers; the last table is multi-hot (1 or 2 keys per sample).

#include <cstdint>
#include <vector>

#include "common/data/key_batch.h"

namespace herald::scheduler {

std::vector<data::KeyBatch> SkewedBatches(size_t iterations, uint32_t batch_size, uint32_t tables,
                                          uint32_t num_dense, uint32_t keys_per_table = 30);

}  // namespace herald::scheduler
