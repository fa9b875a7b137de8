#pragma once
// The key of an id written as a string: XXH64 of its bytes with seed 0
// (xxHash 0.8, header only). Stable across machines, processes and
// releases: a string gives the same key everywhere, and Python's xxhash
// (`xxhash.xxh64_intdigest(s.encode(), 0)`) gives the same number. Two
// strings may share a key (a collision, about n^2 / 2^65 pairs among n
// distinct strings); `heraldctl data stats` counts them.

#include <cstdint>

#include "absl/strings/string_view.h"

namespace herald::data {

uint64_t StringKey(absl::string_view id);

}  // namespace herald::data
