#pragma once
// Typed ids: a TableId cannot be passed where a ShardId is expected.

#include <cstdint>
#include <functional>
#include <ostream>

namespace herald {

template <typename Tag, typename T>
class StrongId {
 public:
  using ValueType = T;
  constexpr StrongId() = default;
  constexpr explicit StrongId(T value) : value_(value) {}
  constexpr T value() const { return value_; }

  friend constexpr bool operator==(StrongId a, StrongId b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(StrongId a, StrongId b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(StrongId a, StrongId b) { return a.value_ < b.value_; }
  friend std::ostream& operator<<(std::ostream& os, StrongId id) { return os << id.value_; }
  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.value_);
  }

 private:
  T value_{};
};

using TableId = StrongId<struct TableIdTag, uint32_t>;
using ShardId = StrongId<struct ShardIdTag, uint32_t>;
using WorkerRank = StrongId<struct WorkerRankTag, uint32_t>;
using PartitionId = StrongId<struct PartitionIdTag, uint32_t>;
using Iteration = StrongId<struct IterationTag, uint64_t>;

// Embedding keys are raw 64-bit ids (hashed categorical values).
using Key = uint64_t;

// How many iterations back a fetch's early distance reaches at most: the
// plan's marks (plan::FetchRows::early) and the PS's fetches
// (ps::FetchIn::early) share it.
inline constexpr uint8_t kMaxEarlyDistance = 3;

}  // namespace herald
