#pragma once
// Sorts records by their 64-bit `key` field, ascending (a shard file lists
// its rows in key order: checkpoint.md), as an LSD radix sort of four
// 16-bit digits: about twice as fast as std::sort for the millions of rows
// of a shard's table, in one scratch copy of the records. Stable. Digits in
// which every key agrees are skipped.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace herald::checkpoint {

template <typename Record>
void SortByKey(std::vector<Record>* records) {
  constexpr int kDigitBits = 16;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  std::vector<Record> scratch(records->size());
  std::vector<uint32_t> start(kBuckets + 1);
  for (int shift = 0; shift < 64; shift += kDigitBits) {
    std::fill(start.begin(), start.end(), 0);
    for (const Record& r : *records) ++start[((r.key >> shift) & (kBuckets - 1)) + 1];
    if (*std::max_element(start.begin(), start.end()) == records->size()) continue;
    for (size_t b = 0; b < kBuckets; ++b) start[b + 1] += start[b];
    for (const Record& r : *records) scratch[start[(r.key >> shift) & (kBuckets - 1)]++] = r;
    records->swap(scratch);
  }
}

}  // namespace herald::checkpoint
