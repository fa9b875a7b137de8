#include "scheduler/planner/tiny_instance.h"

#include "common/rng.h"

namespace herald::scheduler {
namespace {

uint32_t Skewed(CounterRng* rng, uint32_t n) {
  const double u = rng->NextDouble();
  const uint32_t k = static_cast<uint32_t>(n * u * u);
  return k < n ? k : n - 1;
}

}  // namespace

std::vector<data::KeyBatch> MakeTinyInstance(const TinyInstanceOptions& o) {
  CounterRng rng(o.seed, 0x7119, static_cast<uint64_t>(o.kind));
  // The entity's own key in each table: a fixed random key.
  std::vector<std::vector<Key>> entity_key(o.entities, std::vector<Key>(o.tables));
  for (auto& keys : entity_key) {
    for (Key& k : keys) k = rng.NextBelow(o.vocabulary);
  }
  std::vector<data::KeyBatch> batches(o.batches);
  for (data::KeyBatch& b : batches) {
    b.num_samples = o.workers;
    b.labels.assign(o.workers, 0.0f);
    b.tables.resize(o.tables);
    for (uint32_t s = 0; s < o.workers; ++s) {
      const uint32_t entity = o.kind == TinyKind::kEntity ? Skewed(&rng, o.entities) : 0;
      for (uint32_t t = 0; t < o.tables; ++t) {
        Key key = Skewed(&rng, o.vocabulary);
        if (o.kind == TinyKind::kEntity && rng.NextDouble() < 0.8) key = entity_key[entity][t];
        b.tables[t].keys.push_back(key);
        b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
      }
    }
  }
  return batches;
}

}  // namespace herald::scheduler
