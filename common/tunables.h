#pragma once
// Every Herald tunable as a constant, made from the one list in
// common/tunables_def.h (type, name, default and meaning of each). Options
// structs take these as their defaults and binaries as their flags'
// defaults; libraries never read flags or the environment.

#include <cstdint>

namespace herald::tunables {

#define HERALD_TUNABLE(type, name, value, meaning) inline constexpr type name = value;
#include "common/tunables_def.h"
#undef HERALD_TUNABLE

struct Tunable {
  const char* name;
  const char* type;
  int64_t value;
  const char* meaning;
};

// Every entry of the list, in its order.
inline constexpr Tunable kAll[] = {
#define HERALD_TUNABLE(type, name, value, meaning) {#name, #type, int64_t{value}, meaning},
#include "common/tunables_def.h"
#undef HERALD_TUNABLE
};

}  // namespace herald::tunables
