#pragma once
// Fixed-size values to and from the bytes of Herald's data files, in the
// host's byte order (little-endian: every platform Herald builds for).

#include <cstddef>
#include <cstring>
#include <string>

namespace herald::data {

// Appends v's bytes to `out`.
template <typename T>
void Put(std::string* out, T v) {
  char tmp[sizeof(T)];
  std::memcpy(tmp, &v, sizeof(T));
  out->append(tmp, sizeof(T));
}

// Appends n values' bytes to `out`.
template <typename T>
void PutArray(std::string* out, const T* data, size_t n) {
  out->append(reinterpret_cast<const char*>(data), n * sizeof(T));
}

// The value whose bytes start at p (any alignment).
template <typename T>
T Get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace herald::data
