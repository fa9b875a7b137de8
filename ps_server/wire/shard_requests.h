#pragma once
// The requests a JobShard serves, as spans into memory the caller owns: a
// decoded protobuf message today (ps_server/service/request_views.h), a
// transport's receive buffer tomorrow. The shard never sees a wire format.
//
// Every span of one block has the block's key count times its width
// (`dim` for gradients, `row_floats` for rows, 1 for versions); the shard
// checks that, and everything else about the content, before it buffers
// anything. The spans must stay valid for the duration of the call.

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "common/ids.h"

namespace herald::ps {

// Keys of one table.
struct KeysIn {
  uint32_t table = 0;
  absl::Span<const Key> keys;
};

// One worker's gradients for one table: `dim` floats per key.
struct GradientsIn {
  uint32_t table = 0;
  uint32_t dim = 0;
  absl::Span<const Key> keys;
  absl::Span<const float> grads;
};

// Absolute rows of one table: `row_floats` floats (values, then optimizer
// state) and one version per key.
struct RowsIn {
  uint32_t table = 0;
  uint32_t row_floats = 0;
  absl::Span<const Key> keys;
  absl::Span<const float> rows;
  absl::Span<const uint64_t> versions;
};

struct FetchIn {
  uint64_t iteration = 0;
  // The early distance d (0: not early; at most kMaxEarlyDistance):
  // no plan of iterations iteration - d .. iteration - 1 changes any of the
  // keys, so they are served once iteration - d - 1 committed, before the
  // later commits, where the shard holds no change for any of them (see
  // FetchRequest.early in proto/ps.proto).
  uint32_t early = 0;
  // Evaluation: rows as of the end of iteration - 1 without creating any (a
  // row the shard does not hold is answered initialised, version 0).
  bool read_only = false;
  std::vector<KeysIn> blocks;
};

struct PushIn {
  uint64_t iteration = 0;
  uint32_t worker = 0;
  std::vector<GradientsIn> blocks;
};

struct WriteBackIn {
  uint64_t iteration = 0;
  uint32_t worker = 0;
  std::vector<RowsIn> blocks;
};

// Where a fetch writes block `b`'s answer: room for n = blocks[b].keys.size()
// rows of `row_floats` floats and n versions, as raw bytes (no alignment
// needed). The shard calls it once per block, in block order, before it
// reads any row.
struct RowsOut {
  char* rows = nullptr;
  char* versions = nullptr;
};

}  // namespace herald::ps
