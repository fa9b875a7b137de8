#include "common/crc32.h"

#include <zlib.h>

#include <algorithm>

#include "absl/strings/str_format.h"

namespace herald {

uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n) {
  uLong c = crc;
  const Bytef* p = static_cast<const Bytef*>(data);
  while (n > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    c = crc32(c, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(c);
}

uint32_t Crc32(const void* data, size_t n) { return Crc32Extend(0, data, n); }

std::string Crc32Hex(uint32_t crc) { return absl::StrFormat("%08x", crc); }

}  // namespace herald
