#include "scheduler/planner/cheapest_worker.h"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace herald::scheduler {
namespace {

// Members of a 4-bit mask (x86-64's baseline has no popcount instruction).
constexpr uint8_t kMembers[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

// Sets bit w of tied[w / 64] for every w ≥ from with cost[w] == least and
// returns how many; tied[] must start at zero.
uint32_t MarkTail(const int32_t* cost, uint32_t from, uint32_t n, int32_t least, uint64_t* tied) {
  uint32_t ties = 0;
  for (uint32_t w = from; w < n; ++w) {
    if (cost[w] != least) continue;
    tied[w / 64] |= uint64_t{1} << (w % 64);
    ++ties;
  }
  return ties;
}

// Each fills tied[] (zeroed, (n + 63) / 64 words) with the workers of the
// least cost and returns how many there are.
uint32_t MarkLeastFour(const int32_t* cost, uint32_t n, uint64_t* tied) {
  uint32_t w = 0;
  int32_t least = CheapestWorker::kClosed;
#if defined(__x86_64__)
  // SSE2 has no signed 32-bit minimum: select by a comparison.
  __m128i least_lanes = _mm_set1_epi32(CheapestWorker::kClosed);
  for (; w + 4 <= n; w += 4) {
    const __m128i lanes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cost + w));
    const __m128i lower = _mm_cmplt_epi32(lanes, least_lanes);
    least_lanes = _mm_or_si128(_mm_and_si128(lower, lanes), _mm_andnot_si128(lower, least_lanes));
  }
  alignas(16) int32_t lane[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(lane), least_lanes);
  least = std::min(std::min(lane[0], lane[1]), std::min(lane[2], lane[3]));
#endif
  for (uint32_t tail = w; tail < n; ++tail) least = std::min(least, cost[tail]);
  uint32_t ties = 0;
  w = 0;
#if defined(__x86_64__)
  // Masks of four bits; four-aligned, so never across two words.
  const __m128i want = _mm_set1_epi32(least);
  for (; w + 4 <= n; w += 4) {
    const __m128i lanes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cost + w));
    const unsigned mask =
        static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lanes, want))));
    tied[w / 64] |= uint64_t{mask} << (w % 64);
    ties += kMembers[mask];
  }
#endif
  return ties + MarkTail(cost, w, n, least, tied);
}

#if defined(__x86_64__)
__attribute__((target("avx2,popcnt"))) uint32_t MarkLeastEight(const int32_t* cost, uint32_t n,
                                                               uint64_t* tied) {
  uint32_t w = 0;
  __m256i least_lanes = _mm256_set1_epi32(CheapestWorker::kClosed);
  for (; w + 8 <= n; w += 8) {
    least_lanes = _mm256_min_epi32(least_lanes,
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cost + w)));
  }
  __m128i m =
      _mm_min_epi32(_mm256_castsi256_si128(least_lanes), _mm256_extracti128_si256(least_lanes, 1));
  m = _mm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = _mm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  int32_t least = _mm_cvtsi128_si32(m);
  for (uint32_t tail = w; tail < n; ++tail) least = std::min(least, cost[tail]);
  // Masks of eight bits; eight-aligned, so never across two words.
  const __m256i want = _mm256_set1_epi32(least);
  uint32_t ties = 0;
  for (w = 0; w + 8 <= n; w += 8) {
    const __m256i lanes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cost + w));
    const unsigned mask = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(lanes, want))));
    tied[w / 64] |= uint64_t{mask} << (w % 64);
    ties += static_cast<uint32_t>(_mm_popcnt_u32(mask));
  }
  return ties + MarkTail(cost, w, n, least, tied);
}
#endif

}  // namespace

bool CheapestWorker::CpuHasAvx2() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return has;
#else
  return false;
#endif
}

CheapestWorker::CheapestWorker(Lanes lanes)
    : eight_(lanes == Lanes::kEight || (lanes == Lanes::kBest && CpuHasAvx2())) {}

uint32_t CheapestWorker::Pick(const int32_t* cost, uint32_t n, CounterRng* rng) {
  const uint32_t words = (n + 63) / 64;
  tied_.assign(words, 0);
#if defined(__x86_64__)
  const uint32_t ties =
      eight_ ? MarkLeastEight(cost, n, tied_.data()) : MarkLeastFour(cost, n, tied_.data());
#else
  const uint32_t ties = MarkLeastFour(cost, n, tied_.data());
#endif
  // The k-th of them in increasing rank.
  uint32_t k = ties == 1 ? 0 : static_cast<uint32_t>(rng->NextBelow(ties));
  if (k == 0) {  // the first: no counting
    uint32_t i = 0;
    while (tied_[i] == 0) ++i;
    return i * 64 + static_cast<uint32_t>(__builtin_ctzll(tied_[i]));
  }
  for (uint32_t i = 0;; ++i) {
    uint64_t mask = tied_[i];
    const uint32_t here = static_cast<uint32_t>(__builtin_popcountll(mask));
    if (k >= here) {
      k -= here;
      continue;
    }
    for (; k > 0; --k) mask &= mask - 1;
    return i * 64 + static_cast<uint32_t>(__builtin_ctzll(mask));
  }
}

}  // namespace herald::scheduler
