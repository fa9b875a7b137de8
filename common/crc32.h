#pragma once
// CRC-32 (zlib's polynomial) of a byte range of any length.

#include <cstddef>
#include <cstdint>
#include <string>

namespace herald {

uint32_t Crc32(const void* data, size_t n);
// Continues `crc` (0 to start) over the range.
uint32_t Crc32Extend(uint32_t crc, const void* data, size_t n);
// 8 lowercase hex digits, as written in manifests.
std::string Crc32Hex(uint32_t crc);

}  // namespace herald
