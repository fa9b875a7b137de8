#pragma once
// Counter-based deterministic random numbers (Philox4x32-10, Salmon et al.,
// SC'11). The output depends only on (key, counter), so any process, thread or
// device computes the same value for the same inputs: a row's initial value is
// a pure function of (seed, table, key). The rounds are common/philox.h's,
// which the CUDA kernels compile too (dropout masks).

#include <array>
#include <cstddef>
#include <cstdint>

namespace herald {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Ten rounds of Philox4x32 on `counter` under `key`.
PhiloxCounter Philox4x32(PhiloxCounter counter, PhiloxKey key);

// Maps 32 random bits to a float uniform in [0, 1) (24 bits of mantissa).
inline float UniformFloat(uint32_t bits) { return (bits >> 8) * (1.0f / 16777216.0f); }

// Stable 64-bit mixer (SplitMix64 finalizer); bijective.
uint64_t Mix64(uint64_t x);

// A stream of random 32-bit words for one (seed, stream id, sub id) triple.
// Not thread-safe; cheap to construct.
class CounterRng {
 public:
  CounterRng(uint64_t seed, uint64_t stream, uint64_t sub);
  uint32_t Next32();
  uint64_t Next64();
  // Uniform in [0, 1).
  float NextFloat() { return UniformFloat(Next32()); }
  double NextDouble();
  // Uniform integer in [0, n). REQUIRES: n > 0.
  uint64_t NextBelow(uint64_t n);
  // Standard normal (Box-Muller).
  double NextGaussian();

 private:
  PhiloxKey key_;
  PhiloxCounter counter_;
  PhiloxCounter block_{};
  int used_ = 4;
};

// Writes the initial values of row (seed, table, key): `dim` floats uniform in
// [-scale, scale). Identical on every process for the same inputs.
void InitEmbeddingRow(uint64_t seed, uint32_t table, uint64_t key, float scale, float* out,
                      size_t dim);

}  // namespace herald
