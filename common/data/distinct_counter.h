#pragma once
// The number of distinct keys in a stream, in bounded memory: exact while
// the stream has at most `exact_limit` distinct keys (a hash set), then a
// HyperLogLog estimate (Flajolet et al. 2007) in 2^precision one-byte
// registers, standard error about 1.04 / sqrt(2^precision) (0.8% at 14).
// Deterministic: the same keys in any order give the same answer, and so do
// counters of parts of the keys merged (Merge) in any grouping: the state
// is a function of the set of keys alone.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "common/ids.h"

namespace herald::data {

class DistinctCounter {
 public:
  // REQUIRES: 4 ≤ precision ≤ 18.
  explicit DistinctCounter(size_t exact_limit = size_t{1} << 16, int precision = 14);

  void Add(Key key);
  // The distinct keys added so far (exact while exact()).
  uint64_t Estimate() const;
  bool exact() const { return registers_.empty(); }
  // Adds every key `other` counted. REQUIRES: the same limit and precision.
  void Merge(const DistinctCounter& other);

  // The state, to store and restore it (binary_format.h's key statistics):
  // the keys, ascending, while exact(); else the registers.
  size_t exact_limit() const { return exact_limit_; }
  int precision() const { return precision_; }
  std::vector<Key> SortedKeys() const;
  const std::vector<uint8_t>& registers() const { return registers_; }
  // A counter beyond its exact limit. REQUIRES: registers.size() is
  // 2^precision.
  static DistinctCounter FromRegisters(size_t exact_limit, int precision,
                                       std::vector<uint8_t> registers);

 private:
  void AddToRegisters(Key key);

  size_t exact_limit_;
  int precision_;
  absl::flat_hash_set<Key> exact_;
  std::vector<uint8_t> registers_;  // empty while exact
};

}  // namespace herald::data
