#include "common/data/generator.h"

#include <algorithm>
#include <cmath>

namespace herald::data {
namespace {

// Random streams of the generator (CounterRng stream ids).
constexpr uint64_t kStreamTableParams = 1;
constexpr uint64_t kStreamDenseParams = 2;
constexpr uint64_t kStreamSample = 3;
constexpr uint64_t kStreamTeacherWeight = 4;
constexpr uint64_t kStreamTeacherVector = 5;

constexpr int kInteractionDim = 4;
// Samples used to calibrate the teacher's bias to the target click rate.
constexpr size_t kCalibrationSamples = 4000;

}  // namespace

uint32_t Permute32(uint32_t x, uint64_t salt) {
  // Four Feistel rounds on 16-bit halves: a bijection for any round function.
  uint32_t l = x >> 16, r = x & 0xFFFF;
  for (int round = 0; round < 4; ++round) {
    uint32_t f = static_cast<uint32_t>(Mix64(r ^ (salt + round * 0x9E3779B97F4A7C15ull))) & 0xFFFF;
    uint32_t nl = r;
    r = l ^ f;
    l = nl;
  }
  return (l << 16) | r;
}

SyntheticGenerator::SyntheticGenerator(GeneratorOptions options)
    : options_(std::move(options)),
      schema_{options_.num_dense, static_cast<uint32_t>(options_.cardinalities.size())} {
  const uint32_t nt = schema_.num_sparse;
  uint64_t population[3] = {2, 2, 2};
  for (uint32_t t = 0; t < nt; ++t) {
    CounterRng rng(options_.seed, kStreamTableParams, t);
    TableProfile p;
    double scaled =
        std::round(static_cast<double>(options_.cardinalities[t]) * options_.cardinality_scale);
    p.cardinality = std::max<uint64_t>(2, static_cast<uint64_t>(scaled));
    p.cardinality = std::min<uint64_t>(p.cardinality, 1ull << 32);
    p.zipf_exponent = 0.95 + 0.35 * rng.NextDouble();
    double u = rng.NextDouble(), u2 = rng.NextDouble();
    p.missing_rate = u < 0.25 ? 0.2 + 0.25 * u2 : 0.03 * u2;
    p.noise = 0.05 + 0.15 * rng.NextDouble();
    p.group = rng.NextDouble() < 0.12 ? Group::kIndependent : static_cast<Group>(t % 3);
    p.weight_scale = 0.15 + 0.35 * rng.NextDouble();
    p.salt = Mix64(options_.seed ^ (0x7AB1E000ull + t));
    if (p.group != Group::kIndependent) {
      uint64_t& pop = population[static_cast<int>(p.group)];
      pop = std::max(pop, p.cardinality);
    }
    tables_.push_back(p);
    table_zipf_.emplace_back(p.cardinality, p.zipf_exponent);
  }
  const double entity_exponent[3] = {1.05, 1.15, 1.2};
  for (int g = 0; g < 3; ++g) entity_zipf_.emplace_back(population[g], entity_exponent[g]);

  for (uint32_t i = 0; i < schema_.num_dense; ++i) {
    CounterRng rng(options_.seed, kStreamDenseParams, i);
    dense_mu_.push_back(0.5 + 2.5 * rng.NextDouble());
    dense_sigma_.push_back(0.5 + 1.0 * rng.NextDouble());
    double u = rng.NextDouble(), u2 = rng.NextDouble();
    dense_missing_.push_back(u < 0.3 ? 0.3 + 0.4 * u2 : 0.05 * u2);
    dense_weight_.push_back(0.25 * rng.NextGaussian());
  }
  for (uint32_t a = 0; a + 1 < nt && interactions_.size() < 4; a += 2) {
    interactions_.push_back({a, a + 1});
  }
  CalibrateBias();
}

void SyntheticGenerator::CalibrateBias() {
  // Choose the bias so the mean click probability over a pilot sample is the
  // target rate (bisection; the mean is monotone in the bias).
  teacher_bias_ = 0.0;
  SampleBlock pilot(schema_);
  Generate(0, kCalibrationSamples, &pilot);
  std::vector<double> logits;
  for (size_t s = 0; s < pilot.size(); ++s) logits.push_back(TeacherLogit(pilot, s));
  double lo = -20, hi = 20;
  for (int it = 0; it < 60; ++it) {
    double mid = 0.5 * (lo + hi), mean = 0;
    for (double l : logits) mean += 1.0 / (1.0 + std::exp(-(l + mid)));
    mean /= static_cast<double>(logits.size());
    (mean < options_.target_click_rate ? lo : hi) = mid;
  }
  teacher_bias_ = 0.5 * (lo + hi);
}

uint64_t SyntheticGenerator::KeyOfRank(uint32_t t, uint64_t rank) const {
  const TableProfile& p = tables_[t];
  // Ranks are < 2^32, so a 32-bit bijection gives distinct, scattered ids.
  return Permute32(static_cast<uint32_t>(rank - 1), p.salt);
}

uint64_t SyntheticGenerator::DrawKey(uint32_t t, const uint64_t entity_rank[3],
                                     CounterRng& rng) const {
  const TableProfile& p = tables_[t];
  double noise_draw = rng.NextDouble();
  uint64_t rank;
  if (options_.correlation == Correlation::kNone || p.group == Group::kIndependent ||
      noise_draw < p.noise) {
    rank = table_zipf_[t].Sample(rng);
  } else {
    uint64_t e = entity_rank[static_cast<int>(p.group)];
    rank = 1 + Mix64(e ^ p.salt) % p.cardinality;
  }
  return KeyOfRank(t, rank);
}

void SyntheticGenerator::Generate(uint64_t first, size_t count, SampleBlock* out) const {
  const uint32_t nt = schema_.num_sparse, nd = schema_.num_dense;
  out->Reserve(out->size() + count, nt);
  for (size_t j = 0; j < count; ++j) {
    CounterRng rng(options_.seed, kStreamSample, first + j);
    uint64_t entity_rank[3] = {0, 0, 0};
    if (options_.correlation == Correlation::kEntities) {
      for (int g = 0; g < 3; ++g) entity_rank[g] = entity_zipf_[g].Sample(rng);
    }
    uint32_t missing_mask = 0;
    for (uint32_t i = 0; i < nd; ++i) {
      if (rng.NextDouble() < dense_missing_[i]) {
        missing_mask |= 1u << i;
        out->dense.push_back(0);
        rng.NextDouble();  // keep the stream layout independent of missingness
        continue;
      }
      double v = std::floor(std::exp(dense_mu_[i] + dense_sigma_[i] * rng.NextGaussian())) - 1.0;
      out->dense.push_back(static_cast<int32_t>(std::clamp(v, 0.0, 2147483647.0)));
    }
    out->dense_missing.push_back(missing_mask);
    for (uint32_t t = 0; t < nt; ++t) {
      bool missing = rng.NextDouble() < tables_[t].missing_rate;
      uint64_t key = DrawKey(t, entity_rank, rng);
      if (!missing) out->keys.push_back(key);
      out->offsets.push_back(static_cast<uint32_t>(out->keys.size()));
    }
    // The sample's features are in place (index = labels.size()); TeacherLogit
    // reads features only, so the label is appended once it is drawn.
    const double logit = TeacherLogit(*out, out->labels.size());
    const double prob = 1.0 / (1.0 + std::exp(-logit));
    out->labels.push_back(rng.NextDouble() < prob ? 1.0f : 0.0f);
  }
}

double SyntheticGenerator::TeacherLogit(const SampleBlock& block, size_t s) const {
  double logit = teacher_bias_;
  for (uint32_t i = 0; i < schema_.num_dense; ++i) {
    if (block.DenseMissing(s, i)) continue;
    double x = std::log1p(static_cast<double>(std::max(0.0f, block.Dense(s, i))));
    logit += dense_weight_[i] * (x - dense_mu_[i]) / (dense_sigma_[i] + 0.5);
  }
  for (uint32_t t = 0; t < schema_.num_sparse; ++t) {
    for (uint64_t key : block.Keys(s, t)) {
      CounterRng rng(options_.seed, kStreamTeacherWeight + (uint64_t{t} << 8), key);
      logit += tables_[t].weight_scale * rng.NextGaussian();
    }
  }
  for (const Interaction& in : interactions_) {
    auto ka = block.Keys(s, in.a), kb = block.Keys(s, in.b);
    if (ka.empty() || kb.empty()) continue;
    CounterRng ra(options_.seed, kStreamTeacherVector + (uint64_t{in.a} << 8), ka[0]);
    CounterRng rb(options_.seed, kStreamTeacherVector + (uint64_t{in.b} << 8), kb[0]);
    double dot = 0;
    for (int d = 0; d < kInteractionDim; ++d) dot += ra.NextGaussian() * rb.NextGaussian();
    logit += 0.3 * dot;
  }
  return logit;
}

}  // namespace herald::data
