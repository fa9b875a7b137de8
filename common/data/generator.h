#pragma once
// Synthetic Criteo-shaped data with a hidden teacher model.
//
// Sample i is a pure function of (options, i): any process regenerates the
// same stream, in any chunking. Tables get the published Criteo Kaggle
// cardinalities (optionally scaled), per-table Zipf skew and missing rates.
// Labels are Bernoulli(sigmoid(teacher logit)), where the teacher is a hidden
// logistic model with per-key weights, dense weights and a few pairwise
// (FM-style) interactions, so a trained model's AUC can be compared with the
// teacher's own.
//
// Correlation::kEntities (the default): a sample comes from a user, an item and
// a context (each drawn Zipf from its own population); most tables are fixed
// functions of one of those entities, so their keys co-occur, as in real click
// logs. A per-table share of draws ("noise") is independent. kNone: every
// column is an independent Zipf draw. Details: docs/data-formats.md.

#include <cstdint>
#include <vector>

#include "common/data/sample_block.h"
#include "common/data/zipf.h"

namespace herald::data {

enum class Correlation { kNone, kEntities };

struct GeneratorOptions {
  uint64_t seed = 1;
  Correlation correlation = Correlation::kEntities;
  // Distinct values per categorical feature; default: Criteo Kaggle.
  std::vector<uint64_t> cardinalities{kCriteoKaggleCardinalities.begin(),
                                      kCriteoKaggleCardinalities.end()};
  uint32_t num_dense = 13;
  // Multiplies every cardinality (result at least 2); < 1 gives small tables
  // for tests and laptops.
  double cardinality_scale = 1.0;
  // Mean click probability the teacher's bias is calibrated to (Criteo: ~0.256).
  double target_click_rate = 0.25;
};

// Immutable after construction; thread-safe.
class SyntheticGenerator {
 public:
  enum class Group : uint8_t { kUser = 0, kItem = 1, kContext = 2, kIndependent = 3 };
  struct TableProfile {
    uint64_t cardinality;
    double zipf_exponent;
    double missing_rate;
    double noise;  // share of independent draws under kEntities
    Group group;
    double weight_scale;  // teacher weight standard deviation
    uint64_t salt;
  };

  explicit SyntheticGenerator(GeneratorOptions options);

  DataSchema schema() const { return schema_; }
  const TableProfile& table(uint32_t t) const { return tables_[t]; }

  // Appends samples [first, first + count) of the stream to `out`.
  // REQUIRES: out->schema == schema().
  void Generate(uint64_t first, size_t count, SampleBlock* out) const;

  // The hidden teacher's logit for sample `s` of `block`; the label was drawn
  // as Bernoulli(sigmoid(logit)). Reads only the sample's features (dense and
  // keys), never its label.
  double TeacherLogit(const SampleBlock& block, size_t s) const;

 private:
  struct Interaction {
    uint32_t a, b;
  };
  void CalibrateBias();
  uint64_t DrawKey(uint32_t t, const uint64_t entity_rank[3], CounterRng& rng) const;
  uint64_t KeyOfRank(uint32_t t, uint64_t rank) const;

  GeneratorOptions options_;
  DataSchema schema_;
  std::vector<TableProfile> tables_;
  std::vector<ZipfDistribution> table_zipf_;
  std::vector<ZipfDistribution> entity_zipf_;  // user, item, context
  std::vector<double> dense_mu_, dense_sigma_, dense_missing_, dense_weight_;
  std::vector<Interaction> interactions_;
  double teacher_bias_ = 0.0;
};

// Exact bijection on 32-bit values (used to turn ranks into scattered ids).
uint32_t Permute32(uint32_t x, uint64_t salt);

}  // namespace herald::data
