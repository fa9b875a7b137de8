#pragma once
// The allocator's choice for one sample: of the workers whose cost is the
// least, one picked uniformly at random. It runs once per sample over every
// worker's cost, so it compares eight costs at a time where the CPU has AVX2
// (checked at run time) and four with SSE2 otherwise; both give the same
// worker and draw the same random numbers, so plans do not depend on the CPU.

#include <cstdint>
#include <vector>

#include "common/rng.h"

namespace herald::scheduler {

class CheapestWorker {
 public:
  // Costs of workers that must not be picked (their share is full). More
  // than any sample's rows can take off.
  static constexpr int32_t kClosed = INT32_MAX / 2;

  enum class Lanes {
    kBest,   // eight when the CPU has AVX2, else four
    kFour,   // SSE2 (every x86-64 CPU)
    kEight,  // AVX2; REQUIRES: CpuHasAvx2()
  };
  static bool CpuHasAvx2();

  explicit CheapestWorker(Lanes lanes = Lanes::kBest);

  // Of the workers w < n (n ≥ 1) whose cost[w] is the least, the k-th in
  // increasing rank, k = rng->NextBelow(ties) (no draw when only one has it).
  // REQUIRES: every cost ≤ kClosed.
  uint32_t Pick(const int32_t* cost, uint32_t n, CounterRng* rng);

 private:
  bool eight_;
  std::vector<uint64_t> tied_;  // bit w: worker w has the least cost
};

}  // namespace herald::scheduler
