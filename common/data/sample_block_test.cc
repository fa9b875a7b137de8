#include "common/data/sample_block.h"

#include "gtest/gtest.h"

namespace herald::data {
namespace {

constexpr DataSchema kSchema{2, 3};

// Sample i: label i, dense (i, -i), dense i missing when i is odd; table 0
// one key, table 1 i keys (none for sample 0: missing), table 2 two keys.
SampleBlock Samples(int count) {
  SampleBlock b(kSchema);
  for (int i = 0; i < count; ++i) {
    b.labels.push_back(static_cast<float>(i));
    b.dense.push_back(i);
    b.dense.push_back(-i);
    b.dense_missing.push_back(i % 2);
    b.keys.push_back(10 * i);
    b.offsets.push_back(static_cast<uint32_t>(b.keys.size()));
    for (int k = 0; k < i; ++k) b.keys.push_back(100 * i + k);
    b.offsets.push_back(static_cast<uint32_t>(b.keys.size()));
    b.keys.push_back(7);
    b.keys.push_back(8 + i);
    b.offsets.push_back(static_cast<uint32_t>(b.keys.size()));
  }
  return b;
}

void ExpectSame(const SampleBlock& a, const SampleBlock& b) {
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.dense, b.dense);
  EXPECT_EQ(a.dense_missing, b.dense_missing);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.keys, b.keys);
}

TEST(SampleBlock, AppendRangeIsAppendFromForEachSampleInOrder) {
  const SampleBlock from = Samples(6);
  for (size_t begin = 0; begin <= 6; ++begin) {
    for (size_t end = begin; end <= 6; ++end) {
      // Onto a block that already holds samples, so offsets must move.
      SampleBlock by_range = Samples(2), one_by_one = Samples(2);
      by_range.AppendRange(from, begin, end);
      for (size_t s = begin; s < end; ++s) one_by_one.AppendFrom(from, s);
      ExpectSame(by_range, one_by_one);
      ASSERT_EQ(by_range.size(), 2 + end - begin);
      for (size_t s = begin; s < end; ++s) {
        const size_t at = 2 + s - begin;
        EXPECT_EQ(by_range.Keys(at, 1).size(), s) << s;
        EXPECT_EQ(by_range.Keys(at, 2)[1], 8 + s);
        EXPECT_EQ(by_range.DenseMissing(at, 0), s % 2 == 1);
      }
    }
  }
}

TEST(SampleBlock, TruncateKeepsTheFirstSamples) {
  SampleBlock b = Samples(5);
  b.Truncate(3);
  ExpectSame(b, Samples(3));
  b.Truncate(7);  // more than it has: unchanged
  ExpectSame(b, Samples(3));
}

}  // namespace
}  // namespace herald::data
