#include "worker/model/feature_bags.h"

#include "gtest/gtest.h"

namespace herald::worker {
namespace {

TEST(SplitFeatures, EachFeatureGetsItsPartOfEverySample) {
  // Sample 0: feature 0 {7}, feature 1 {8, 9}; sample 1: {}, {5}; sample 2: {1, 2}, {}.
  const std::vector<uint32_t> offsets = {0, 3, 4, 6};
  const std::vector<uint32_t> slots = {7, 8, 9, 5, 1, 2};
  std::vector<FeatureBags> out;
  SplitFeatures(offsets, slots, 2, {1, 2, 0, 1, 2, 0}, {}, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].offsets, (std::vector<uint32_t>{0, 1, 1, 3}));
  EXPECT_EQ(out[0].slots, (std::vector<uint32_t>{7, 1, 2}));
  EXPECT_EQ(out[1].offsets, (std::vector<uint32_t>{0, 2, 3, 3}));
  EXPECT_EQ(out[1].slots, (std::vector<uint32_t>{8, 9, 5}));
  EXPECT_TRUE(out[0].weights.empty() && out[1].weights.empty());
  // Weights go with their slots.
  SplitFeatures(offsets, slots, 2, {1, 2, 0, 1, 2, 0}, {0.5f, 1, 2, 3, 4, 5}, &out);
  EXPECT_EQ(out[0].weights, (std::vector<float>{0.5f, 4, 5}));
  EXPECT_EQ(out[1].weights, (std::vector<float>{1, 2, 3}));
  // One feature: the table's own lists.
  SplitFeatures(offsets, slots, 1, {}, {}, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].offsets, offsets);
  EXPECT_EQ(out[0].slots, slots);
}

}  // namespace
}  // namespace herald::worker
