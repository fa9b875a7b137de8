#pragma once
// The number and id parsers the text readers share. Each accepts a whole
// field or nothing; none allocates.

#include <cmath>
#include <cstdint>

#include "absl/strings/charconv.h"
#include "absl/strings/string_view.h"

namespace herald::data {

// Hex digit values; 0xFF marks a non-hex byte.
struct HexTable {
  uint8_t v[256];
  constexpr HexTable() : v() {
    for (int i = 0; i < 256; ++i) v[i] = 0xFF;
    for (int i = 0; i < 10; ++i) v['0' + i] = static_cast<uint8_t>(i);
    for (int i = 0; i < 6; ++i) {
      v['a' + i] = static_cast<uint8_t>(10 + i);
      v['A' + i] = static_cast<uint8_t>(10 + i);
    }
  }
};
inline constexpr HexTable kHex;

// 1-16 hex digits, either case.
inline bool ParseHexId(absl::string_view f, uint64_t* key) {
  if (f.empty() || f.size() > 16) return false;
  uint64_t v = 0;
  for (char c : f) {
    const uint8_t d = kHex.v[static_cast<uint8_t>(c)];
    if (d == 0xFF) return false;
    v = (v << 4) | d;
  }
  *key = v;
  return true;
}

// An unsigned 64-bit decimal number, digits only.
inline bool ParseDecimalId(absl::string_view f, uint64_t* key) {
  if (f.empty() || f.size() > 20) return false;
  uint64_t v = 0;
  for (char c : f) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *key = v;
  return true;
}

// A finite number as absl::from_chars reads it into a double, then rounded
// to float (which must be finite too). Plain decimals of at most 15
// significant digits and 22 fraction digits ("-12", "0.25") take a fast
// path that gives the same bits: m and 10^k are exact doubles, and IEEE
// division rounds m / 10^k correctly, as from_chars does.
inline bool ParseFiniteFloat(absl::string_view f, float* out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char* p = f.data();
  const char* end = p + f.size();
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  uint64_t m = 0;
  int digits = 0, fraction = 0;
  const char* int_begin = p;
  while (p != end && *p >= '0' && *p <= '9') m = m * 10 + (*p++ - '0'), ++digits;
  bool fast = p != int_begin;
  if (fast && p != end && *p == '.') {
    const char* frac_begin = ++p;
    while (p != end && *p >= '0' && *p <= '9') m = m * 10 + (*p++ - '0'), ++digits;
    fraction = static_cast<int>(p - frac_begin);
    fast = fraction > 0;
  }
  if (fast && p == end && digits <= 15 && fraction <= 22) {
    double v = static_cast<double>(m);
    if (fraction > 0) v /= kPow10[fraction];
    *out = static_cast<float>(negative ? -v : v);
    return std::isfinite(*out);
  }
  double v = 0;
  auto r = absl::from_chars(f.data(), f.data() + f.size(), v);
  if (f.empty() || r.ec != std::errc() || r.ptr != f.data() + f.size() || !std::isfinite(v)) {
    return false;
  }
  *out = static_cast<float>(v);
  return std::isfinite(*out);
}

}  // namespace herald::data
