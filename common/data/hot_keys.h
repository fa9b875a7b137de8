#pragma once
// The most used keys of a stream, in memory for `capacity` keys: the
// Space-Saving algorithm (Metwally, Agrawal, El Abbadi 2005). While the
// stream has at most `capacity` distinct keys the counts and the ranking
// are exact. Beyond, a new key takes the place of the least counted one
// and inherits its count + 1; every key used more than N / capacity times
// (N uses in all) is still kept, its count over-estimated by at most
// N / capacity. Deterministic for a given order of keys.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"

namespace herald::data {

class HotKeys {
 public:
  // REQUIRES: capacity ≥ 1.
  explicit HotKeys(size_t capacity);

  void Add(Key key);
  // Up to n kept keys, most counted first (the smaller key first among
  // equal counts).
  std::vector<Key> Top(size_t n) const;
  // The kept count of `key`, 0 if it is not kept.
  uint64_t Count(Key key) const;

 private:
  // A min-heap of entries by (count, key): the root is the one replaced.
  bool Less(uint32_t a, uint32_t b) const;
  void SiftUp(size_t pos);
  void SiftDown(size_t pos);
  void Swap(size_t a, size_t b);

  size_t capacity_;
  std::vector<Key> keys_;         // per entry
  std::vector<uint64_t> counts_;  // per entry
  std::vector<uint32_t> heap_;    // entries
  std::vector<uint32_t> pos_;     // per entry: its place in heap_
  absl::flat_hash_map<Key, uint32_t> entry_of_;
};

}  // namespace herald::data
