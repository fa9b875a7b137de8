#pragma once
// Sizes in bytes as people write them on command lines: "0", "1048576",
// "512K", "64M", "4G", "1T" (binary multiples, case-insensitive, an optional
// trailing "B" or "iB": "64MiB", "64MB" = 64 << 20).

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace herald {

// Errors: InvalidArgument quoting the text for anything else or an overflow.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

}  // namespace herald
