#pragma once
// A job's consistent checkpoint as the scheduler takes it: every PS shard
// writes its file, then the scheduler assembles the manifest from those
// files and what it alone knows (the spec, the worker count, the dense half
// and the planner file) and writes it last (docs/checkpoints.md). An
// iteration directory without a manifest is an unfinished checkpoint.

#include <string>

#include "absl/status/statusor.h"
#include "checkpoint/manifest.h"
#include "ps_server/client/ps_client.h"

namespace herald::scheduler {

// Checkpoints every shard of `parts.job_id` at `parts.iteration` into `dir`
// (each waits for that iteration's commit), then writes the manifest.
// Returns the manifest's path. Errors: the shards' (a storage refusal is
// RESOURCE_EXHAUSTED or PERMISSION_DENIED), the manifest write's.
absl::StatusOr<std::string> CheckpointJob(ps::PsClient& ps, const checkpoint::ManifestParts& parts,
                                          const std::string& dir);

}  // namespace herald::scheduler
