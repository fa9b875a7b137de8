#pragma once
// Compressed inputs read as they are: a gzip or zstd file is a stream of
// its decompressed bytes (docs/data-formats.md, "Compressed files").

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/data/input_stream.h"

namespace herald::data {

// Looks at the first bytes of `raw`: gzip's magic (1f 8b) gives a stream of
// the decompressed bytes of every gzip member in turn, zstd's (28 b5 2f fd)
// the decompressed bytes of every frame; anything else is returned as it is
// (its first bytes still read first). Offsets, Skip and positions of the
// result count decompressed bytes; Skip reads and drops them.
// Errors of the result's Read: DataLoss naming `name` for corrupt or
// truncated compressed data.
absl::StatusOr<std::unique_ptr<InputStream>> Decompressing(std::unique_ptr<InputStream> raw,
                                                           std::string name);

}  // namespace herald::data
