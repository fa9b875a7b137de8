#pragma once
// The embedding tables a job spec asks for, as shard table options.

#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "ps_server/store/embedding_table.h"

namespace herald::ps {

// Largest embedding dimension a table may have.
inline constexpr uint32_t kMaxEmbeddingDim = 4096;

// Table i of the result is spec.tables(i) with TableId(i). A table without its
// own optimizer uses spec.sparse_optimizer. Each shard of `num_shards` caps a
// capped table at ceil(max_rows / num_shards) rows (keys spread evenly).
// Errors: InvalidArgument naming the field, e.g. "tables[3].dim: must be in
// [1, 4096], got 0".
absl::StatusOr<std::vector<TableOptions>> TableOptionsFromSpec(const proto::JobSpec& spec,
                                                               uint32_t num_shards);

}  // namespace herald::ps
