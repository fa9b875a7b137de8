#pragma once
// Philox4x32-10 (Salmon et al., SC'11) written once for every device
// (common/host_device.h): the CPU's random streams (rng.h) and the CUDA
// kernels draw from this one function, so both draw the same bits.
// Includes only <stdint.h>, so nvcc compiles it as it is.

#include <stdint.h>

#include "common/host_device.h"

namespace herald {

// The round multipliers and the key's Weyl increments.
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

HERALD_HOST_DEVICE_FN void PhiloxMulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

struct PhiloxBlock {
  uint32_t v[4];
};

// Ten rounds of Philox4x32 on `counter` under the key (k0, k1).
HERALD_HOST_DEVICE_FN PhiloxBlock PhiloxRounds(PhiloxBlock c, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    PhiloxMulHiLo(kPhiloxM0, c.v[0], &hi0, &lo0);
    PhiloxMulHiLo(kPhiloxM1, c.v[2], &hi1, &lo1);
    c = PhiloxBlock{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return c;
}

}  // namespace herald
