#include "common/data/generator.h"

#include <cmath>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "common/data/data_stats.h"
#include "common/data/test_util.h"
#include "common/math/auc.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

using testing::DiffBlocks;

GeneratorOptions Small(uint64_t seed, Correlation c = Correlation::kEntities) {
  GeneratorOptions o;
  o.seed = seed;
  o.correlation = c;
  o.cardinality_scale = 0.01;
  return o;
}

TEST(SyntheticGenerator, DeterministicAndChunkingInvariant) {
  SyntheticGenerator gen(Small(7));
  SampleBlock whole(gen.schema()), parts(gen.schema()), again(gen.schema());
  gen.Generate(0, 1000, &whole);
  gen.Generate(0, 300, &parts);
  gen.Generate(300, 700, &parts);
  SyntheticGenerator gen2(Small(7));
  gen2.Generate(0, 1000, &again);
  EXPECT_EQ(DiffBlocks(whole, parts), "");
  EXPECT_EQ(DiffBlocks(whole, again), "");
  SyntheticGenerator other(Small(8));
  SampleBlock different(gen.schema());
  other.Generate(0, 1000, &different);
  EXPECT_NE(DiffBlocks(whole, different), "");
}

TEST(SyntheticGenerator, CriteoShapeCardinalitiesSkewAndMissing) {
  SyntheticGenerator gen(Small(1));
  SampleBlock b(gen.schema());
  gen.Generate(0, 50000, &b);
  EXPECT_EQ(b.schema.num_dense, 13u);
  EXPECT_EQ(b.schema.num_sparse, 26u);
  DataStatsCollector stats(b.schema);
  stats.Add(b);
  DatasetSummary s = stats.Summarize();
  double min_top10 = 1, max_top10 = 0;
  uint64_t total_missing = 0;
  for (uint32_t t = 0; t < 26; ++t) {
    const auto& ts = s.tables[t];
    EXPECT_LE(ts.distinct_keys, gen.table(t).cardinality) << "table " << t;
    total_missing += ts.missing;
    if (ts.distinct_keys >= 100) {
      min_top10 = std::min(min_top10, ts.top10_share);
      max_top10 = std::max(max_top10, ts.top10_share);
    }
  }
  // Skewed (hot keys dominate) and differently skewed across tables.
  EXPECT_GT(max_top10, 0.6);
  EXPECT_GT(max_top10 - min_top10, 0.05);
  EXPECT_GT(total_missing, 0u);
  double ctr = static_cast<double>(s.positives) / s.rows;
  EXPECT_GT(ctr, 0.1);
  EXPECT_LT(ctr, 0.5);
}

TEST(SyntheticGenerator, TeacherLogitPredictsLabels) {
  SyntheticGenerator gen(Small(3));
  SampleBlock b(gen.schema());
  gen.Generate(0, 20000, &b);
  std::vector<double> scores;
  for (size_t s = 0; s < b.size(); ++s) scores.push_back(gen.TeacherLogit(b, s));
  double auc = math::ExactAuc(scores, b.labels);
  EXPECT_GT(auc, 0.7);
  EXPECT_LT(auc, 0.99);
}

// Co-occurrence: how often a sample's (table a, table b) key pair was seen
// before. Entity-correlated data repeats pairs far more often.
double RepeatedPairShare(const SampleBlock& b, uint32_t ta, uint32_t tb) {
  absl::flat_hash_set<std::pair<uint64_t, uint64_t>> seen;
  size_t repeated = 0, total = 0;
  for (size_t s = 0; s < b.size(); ++s) {
    auto ka = b.Keys(s, ta), kb = b.Keys(s, tb);
    if (ka.empty() || kb.empty()) continue;
    ++total;
    repeated += !seen.insert({ka[0], kb[0]}).second;
  }
  return static_cast<double>(repeated) / std::max<size_t>(total, 1);
}

TEST(SyntheticGenerator, EntityCorrelationMakesFeaturesCoOccur) {
  SyntheticGenerator corr(Small(11, Correlation::kEntities));
  SyntheticGenerator indep(Small(11, Correlation::kNone));
  // Two large tables of the same entity group.
  uint32_t ta = 0, tb = 0;
  for (uint32_t a = 0; a < 26 && tb == 0; ++a) {
    for (uint32_t c = a + 1; c < 26; ++c) {
      auto ga = corr.table(a), gc = corr.table(c);
      if (ga.group == gc.group && ga.group != SyntheticGenerator::Group::kIndependent &&
          ga.cardinality >= 1000 && gc.cardinality >= 1000) {
        ta = a;
        tb = c;
        break;
      }
    }
  }
  ASSERT_NE(tb, 0u) << "no pair of large same-entity tables";
  SampleBlock bc(corr.schema()), bi(indep.schema());
  corr.Generate(0, 30000, &bc);
  indep.Generate(0, 30000, &bi);
  double share_corr = RepeatedPairShare(bc, ta, tb);
  double share_indep = RepeatedPairShare(bi, ta, tb);
  EXPECT_GT(share_corr, share_indep + 0.15) << "tables " << ta << "," << tb;
}

TEST(Permute32, IsABijectionOnASample) {
  std::set<uint32_t> out;
  for (uint32_t x = 0; x < 100000; ++x) out.insert(Permute32(x, 99));
  EXPECT_EQ(out.size(), 100000u);
}

}  // namespace
}  // namespace herald::data
