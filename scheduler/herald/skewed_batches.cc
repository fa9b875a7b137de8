#include "scheduler/herald/skewed_batches.h"

#include "common/rng.h"

namespace herald::scheduler {

std::vector<data::KeyBatch> SkewedBatches(size_t iterations, uint32_t batch_size, uint32_t tables,
                                          uint32_t num_dense, uint32_t keys_per_table) {
  CounterRng rng(5, 1, 2);
  std::vector<data::KeyBatch> out;
  for (size_t it = 0; it < iterations; ++it) {
    data::KeyBatch b;
    b.num_samples = batch_size;
    b.tables.resize(tables);
    for (uint32_t i = 0; i < batch_size; ++i) {
      b.labels.push_back(rng.NextFloat() < 0.3f ? 1.0f : 0.0f);
      for (uint32_t d = 0; d < num_dense; ++d) b.dense.push_back(rng.NextFloat());
      for (uint32_t t = 0; t < tables; ++t) {
        const int hots = t + 1 == tables ? 1 + static_cast<int>(rng.NextBelow(2)) : 1;
        for (int h = 0; h < hots; ++h) {
          const double u = rng.NextDouble();
          b.tables[t].keys.push_back(static_cast<Key>(keys_per_table * u * u) + 1000 * t);
        }
        b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace herald::scheduler
