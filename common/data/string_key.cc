#include "common/data/string_key.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace herald::data {

uint64_t StringKey(absl::string_view id) { return XXH64(id.data(), id.size(), 0); }

}  // namespace herald::data
