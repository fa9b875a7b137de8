#include "common/rng.h"

#include <cmath>

#include "common/philox.h"

namespace herald {

PhiloxCounter Philox4x32(PhiloxCounter c, PhiloxKey k) {
  const PhiloxBlock out = PhiloxRounds(PhiloxBlock{{c[0], c[1], c[2], c[3]}}, k[0], k[1]);
  return {out.v[0], out.v[1], out.v[2], out.v[3]};
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

namespace {

// Philox4x32 of counters (first + l, table, key) for lanes l < kLanes, round
// by round: the same words as one Philox4x32 call per counter, with the
// lanes' independent multiplications interleaved. Writes block l's words
// to words[0..3][l].
template <size_t kLanes>
void PhiloxLanes(uint64_t seed, uint32_t first, uint32_t table, uint64_t key,
                 uint32_t (&words)[4][kLanes]) {
  uint32_t(&c0)[kLanes] = words[0];
  uint32_t(&c1)[kLanes] = words[1];
  uint32_t(&c2)[kLanes] = words[2];
  uint32_t(&c3)[kLanes] = words[3];
  for (size_t l = 0; l < kLanes; ++l) {
    c0[l] = first + static_cast<uint32_t>(l);
    c1[l] = table;
    c2[l] = static_cast<uint32_t>(key);
    c3[l] = static_cast<uint32_t>(key >> 32);
  }
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    for (size_t l = 0; l < kLanes; ++l) {
      uint32_t hi0, lo0, hi1, lo1;
      PhiloxMulHiLo(kPhiloxM0, c0[l], &hi0, &lo0);
      PhiloxMulHiLo(kPhiloxM1, c2[l], &hi1, &lo1);
      c0[l] = hi1 ^ c1[l] ^ k0;
      c1[l] = lo1;
      c2[l] = hi0 ^ c3[l] ^ k1;
      c3[l] = lo0;
    }
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
}

// Blocks [first, first + kLanes) of a row: floats 4·block .. +4, below dim.
template <size_t kLanes>
void InitBlocks(uint64_t seed, uint32_t table, uint64_t key, float scale, size_t first, float* out,
                size_t dim) {
  uint32_t words[4][kLanes];
  PhiloxLanes<kLanes>(seed, static_cast<uint32_t>(first), table, key, words);
  for (size_t l = 0; l < kLanes; ++l) {
    const size_t at = 4 * (first + l);
    for (size_t j = 0; j < 4 && at + j < dim; ++j) {
      out[at + j] = (2.0f * UniformFloat(words[j][l]) - 1.0f) * scale;
    }
  }
}

}  // namespace

void InitEmbeddingRow(uint64_t seed, uint32_t table, uint64_t key, float scale, float* out,
                      size_t dim) {
  // Block i (four floats) is Philox4x32 of counter (i, table, key) under
  // the seed. Blocks are computed 16, 8, 4, 2 or 1 at a time (a fixed
  // count the compiler interleaves: 2.4× faster than block by block at dim
  // 64), the same bits as block by block.
  const size_t blocks = (dim + 3) / 4;
  size_t first = 0;
  for (; blocks - first >= 16; first += 16)
    InitBlocks<16>(seed, table, key, scale, first, out, dim);
  if (blocks - first >= 8) {
    InitBlocks<8>(seed, table, key, scale, first, out, dim);
    first += 8;
  }
  if (blocks - first >= 4) {
    InitBlocks<4>(seed, table, key, scale, first, out, dim);
    first += 4;
  }
  if (blocks - first >= 2) {
    InitBlocks<2>(seed, table, key, scale, first, out, dim);
    first += 2;
  }
  if (blocks - first == 1) InitBlocks<1>(seed, table, key, scale, first, out, dim);
}

}  // namespace herald
