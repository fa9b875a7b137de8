#include "common/rng.h"

#include <cmath>

namespace herald {
namespace {
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

inline void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}
}  // namespace

PhiloxCounter Philox4x32(PhiloxCounter c, PhiloxKey k) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(kPhiloxM0, c[0], &hi0, &lo0);
    MulHiLo(kPhiloxM1, c[2], &hi1, &lo1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kPhiloxW0;
    k[1] += kPhiloxW1;
  }
  return c;
}

uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

CounterRng::CounterRng(uint64_t seed, uint64_t stream, uint64_t sub)
    : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
      counter_{0, 0, static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)} {
  // The sub id occupies the high counter word pair together with the block
  // index (low 32 bits), so streams never overlap for < 2^32 blocks.
  counter_[1] = static_cast<uint32_t>(sub);
  key_[1] ^= static_cast<uint32_t>(sub >> 32) * 0x85EBCA6Bu;
}

uint32_t CounterRng::Next32() {
  if (used_ == 4) {
    block_ = Philox4x32(counter_, key_);
    ++counter_[0];
    used_ = 0;
  }
  return block_[used_++];
}

uint64_t CounterRng::Next64() {
  uint64_t hi = Next32();
  return (hi << 32) | Next32();
}

double CounterRng::NextDouble() { return (Next64() >> 11) * (1.0 / 9007199254740992.0); }

uint64_t CounterRng::NextBelow(uint64_t n) {
  // Lemire's multiply-shift with rejection: unbiased.
  while (true) {
    uint64_t x = Next64();
    unsigned __int128 m = static_cast<unsigned __int128>(x) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low >= n || low >= (-n) % n) return static_cast<uint64_t>(m >> 64);
  }
}

double CounterRng::NextGaussian() {
  double u1 = NextDouble();
  double u2 = NextDouble();
  if (u1 < 1e-300) u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

void InitEmbeddingRow(uint64_t seed, uint32_t table, uint64_t key, float scale, float* out,
                      size_t dim) {
  PhiloxKey k{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  for (size_t i = 0; i < dim; i += 4) {
    PhiloxCounter c{static_cast<uint32_t>(i / 4), table, static_cast<uint32_t>(key),
                    static_cast<uint32_t>(key >> 32)};
    PhiloxCounter r = Philox4x32(c, k);
    for (size_t j = 0; j < 4 && i + j < dim; ++j) {
      out[i + j] = (2.0f * UniformFloat(r[j]) - 1.0f) * scale;
    }
  }
}

}  // namespace herald
