#pragma once
// A set of worker ranks (< kMaxWorkers) as a fixed bitset: cheap to copy,
// iterate and test, used per row and per batch key by the planner.
// WorkerSet holds any job's workers; hot loops that know the job is small
// use a narrower BasicWorkerSet (RowDirectory::Newest<kWords>) to read less
// memory.

#include <cstdint>

namespace herald::scheduler {

template <int kWords>
class BasicWorkerSet {
 public:
  static constexpr uint32_t kMaxWorkers = 64 * kWords;

  void Add(uint32_t w) { words_[w >> 6] |= uint64_t{1} << (w & 63); }
  void Remove(uint32_t w) { words_[w >> 6] &= ~(uint64_t{1} << (w & 63)); }
  bool Has(uint32_t w) const { return (words_[w >> 6] >> (w & 63)) & 1; }
  void Clear() {
    for (uint64_t& word : words_) word = 0;
  }
  bool Empty() const {
    uint64_t any = 0;
    for (uint64_t word : words_) any |= word;
    return any == 0;
  }
  uint32_t Count() const {
    uint32_t n = 0;
    for (uint64_t word : words_) n += static_cast<uint32_t>(__builtin_popcountll(word));
    return n;
  }
  // min(Count(), 2), without a population count.
  uint32_t CountUpTo2() const {
    uint32_t n = 0;
    for (uint64_t word : words_) {
      if (word == 0) continue;
      n += (word & (word - 1)) == 0 ? 1 : 2;
      if (n >= 2) return 2;
    }
    return n;
  }
  // True when the set has exactly one member.
  bool IsSingle() const { return CountUpTo2() == 1; }
  // True when the set is exactly {w}.
  bool IsOnly(uint32_t w) const {
    for (int i = 0; i < kWords; ++i) {
      const uint64_t want = i == static_cast<int>(w >> 6) ? uint64_t{1} << (w & 63) : 0;
      if (words_[i] != want) return false;
    }
    return true;
  }
  // The n-th smallest member (from 0); n < Count().
  uint32_t Nth(uint32_t n) const {
    for (int i = 0;; ++i) {
      const uint32_t here = static_cast<uint32_t>(__builtin_popcountll(words_[i]));
      if (n >= here) {
        n -= here;
        continue;
      }
      uint64_t word = words_[i];
      for (; n > 0; --n) word &= word - 1;
      return static_cast<uint32_t>(i * 64 + __builtin_ctzll(word));
    }
  }
  // The members 64·i .. 64·i + 63 as bits.
  uint64_t word(int i) const { return words_[i]; }
  void set_word(int i, uint64_t bits) { words_[i] = bits; }
  bool operator==(const BasicWorkerSet& o) const {
    for (int i = 0; i < kWords; ++i) {
      if (words_[i] != o.words_[i]) return false;
    }
    return true;
  }
  // Calls fn(w) for every member in increasing order.
  template <typename Fn>
  void ForEach(Fn fn) const {
    for (int i = 0; i < kWords; ++i) {
      for (uint64_t word = words_[i]; word != 0; word &= word - 1) {
        fn(static_cast<uint32_t>(i * 64 + __builtin_ctzll(word)));
      }
    }
  }

 private:
  uint64_t words_[kWords] = {};
};

using WorkerSet = BasicWorkerSet<4>;

}  // namespace herald::scheduler
