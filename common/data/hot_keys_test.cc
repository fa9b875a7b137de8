#include "common/data/hot_keys.h"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace herald::data {
namespace {

// While the distinct keys fit, the ranking is the exact one: by uses,
// smaller key first among equals.
TEST(HotKeys, ExactWhileTheKeysFit) {
  HotKeys hot(10);
  const std::vector<Key> stream = {5, 3, 5, 9, 3, 5, 1, 9, 7, 7, 2};
  for (Key k : stream) hot.Add(k);
  EXPECT_EQ(hot.Top(3), (std::vector<Key>{5, 3, 7}));
  EXPECT_EQ(hot.Top(100), (std::vector<Key>{5, 3, 7, 9, 1, 2}));
  EXPECT_EQ(hot.Count(5), 3u);
  EXPECT_EQ(hot.Count(4), 0u);
}

// A skewed stream with far more distinct keys than counters: every key
// used more than N / capacity times is kept, and the top of the ranking is
// the true top.
TEST(HotKeys, KeepsTheHeavyKeysOfALongTail) {
  const size_t capacity = 200;
  HotKeys hot(capacity);
  std::map<Key, uint64_t> truth;
  std::mt19937_64 rng(3);
  const uint64_t uses = 200000;
  for (uint64_t i = 0; i < uses; ++i) {
    // Half the uses go to 20 hot keys (key k with weight ~1/k), half to a
    // tail of a million keys.
    const Key key = rng() % 2 == 0 ? 1 + (rng() % 20) * (rng() % 20) / 19 : 1000 + rng() % 1000000;
    hot.Add(key);
    ++truth[key];
  }
  std::vector<std::pair<uint64_t, Key>> ranked;
  for (const auto& [key, count] : truth) ranked.emplace_back(count, key);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [count, key] : ranked) {
    if (count <= uses / capacity) break;
    EXPECT_GE(hot.Count(key), count) << key;  // kept, never under-counted
    EXPECT_LE(hot.Count(key), count + uses / capacity) << key;
  }
  std::vector<Key> want;
  for (size_t i = 0; i < 5; ++i) want.push_back(ranked[i].second);
  EXPECT_EQ(hot.Top(5), want);
}

}  // namespace
}  // namespace herald::data
