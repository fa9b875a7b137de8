#include "common/data/distinct_counter.h"

#include <algorithm>
#include <cmath>

#include "common/rng.h"

namespace herald::data {

DistinctCounter::DistinctCounter(size_t exact_limit, int precision)
    : exact_limit_(exact_limit), precision_(precision) {}

void DistinctCounter::Add(Key key) {
  if (!exact()) {
    AddToRegisters(key);
    return;
  }
  exact_.insert(key);
  if (exact_.size() <= exact_limit_) return;
  registers_.assign(size_t{1} << precision_, 0);
  for (Key k : exact_) AddToRegisters(k);
  absl::flat_hash_set<Key>().swap(exact_);  // give the memory back
}

void DistinctCounter::AddToRegisters(Key key) {
  const uint64_t hash = Mix64(key);
  const uint64_t index = hash >> (64 - precision_);
  // Rank of the first 1 bit in the remaining 64 − precision bits (1-based);
  // all zero: 64 − precision + 1.
  const uint64_t rest = hash << precision_;
  const int rank = rest == 0 ? 64 - precision_ + 1 : __builtin_clzll(rest) + 1;
  if (registers_[index] < rank) registers_[index] = static_cast<uint8_t>(rank);
}

void DistinctCounter::Merge(const DistinctCounter& other) {
  if (other.exact()) {
    for (Key k : other.exact_) Add(k);
    return;
  }
  if (exact()) {  // beyond the limit once merged: registers from here on
    registers_.assign(size_t{1} << precision_, 0);
    for (Key k : exact_) AddToRegisters(k);
    absl::flat_hash_set<Key>().swap(exact_);
  }
  for (size_t i = 0; i < registers_.size(); ++i) {
    registers_[i] = std::max(registers_[i], other.registers_[i]);
  }
}

std::vector<Key> DistinctCounter::SortedKeys() const {
  std::vector<Key> keys(exact_.begin(), exact_.end());
  std::sort(keys.begin(), keys.end());
  return keys;
}

DistinctCounter DistinctCounter::FromRegisters(size_t exact_limit, int precision,
                                               std::vector<uint8_t> registers) {
  DistinctCounter counter(exact_limit, precision);
  counter.registers_ = std::move(registers);
  return counter;
}

uint64_t DistinctCounter::Estimate() const {
  if (exact()) return exact_.size();
  const double m = static_cast<double>(registers_.size());
  double sum = 0;
  size_t zeros = 0;
  for (uint8_t r : registers_) {
    sum += std::ldexp(1.0, -r);
    zeros += r == 0;
  }
  const double alpha = 0.7213 / (1 + 1.079 / m);
  double estimate = alpha * m * m / sum;
  // Small range: linear counting is the better estimate.
  if (estimate <= 2.5 * m && zeros > 0) estimate = m * std::log(m / static_cast<double>(zeros));
  // Never below what was counted exactly before switching.
  return std::max<uint64_t>(static_cast<uint64_t>(std::llround(estimate)), exact_limit_ + 1);
}

}  // namespace herald::data
