#pragma once
// Loads a job shard's rows from a checkpoint manifest.

#include <string>

#include "absl/status/statusor.h"
#include "proto/checkpoint.pb.h"
#include "ps_server/shard/job_shard.h"

namespace herald::ps {

// Loads into `shard` (created with first_iteration = manifest.iteration() + 1,
// not yet serving) every row of the checkpoint that belongs to it. With the
// same shard count it reads its own file; otherwise it reads every file and
// keeps the keys the router gives it (re-sharding). Each file's CRC must
// match the manifest; tables must match in dimension and row size.
// Returns the number of rows loaded. Errors: DataLoss, NotFound,
// InvalidArgument naming the file and table.
absl::StatusOr<uint64_t> RestoreShard(const proto::CheckpointManifest& manifest,
                                      const std::string& manifest_dir, JobShard* shard);

}  // namespace herald::ps
