#include "checkpoint/sort_by_key.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace herald::checkpoint {
namespace {

struct Record {
  uint64_t key;
  uint32_t payload;
};

// The order std::stable_sort gives, on keys that differ in every digit,
// in some digits only, and not at all, with repeats.
TEST(SortByKey, SortsAsAStableSortByKeyWould) {
  std::mt19937_64 rng(3);
  for (uint64_t mask : {~uint64_t{0}, uint64_t{0xffff}, uint64_t{0xffff000000000000},
                        uint64_t{0x00ff00ff00000f00}, uint64_t{0}}) {
    for (size_t n : {0, 1, 2, 1000, 70000}) {
      std::vector<Record> records(n);
      for (uint32_t i = 0; i < n; ++i) records[i] = {rng() & mask, i};
      if (n > 10) records[n / 2].key = records[n / 3].key;  // a repeat
      std::vector<Record> want = records;
      std::stable_sort(want.begin(), want.end(),
                       [](const Record& a, const Record& b) { return a.key < b.key; });
      SortByKey(&records);
      ASSERT_EQ(records.size(), want.size());
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(records[i].key, want[i].key) << "mask " << mask << " at " << i;
        ASSERT_EQ(records[i].payload, want[i].payload) << "mask " << mask << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace herald::checkpoint
