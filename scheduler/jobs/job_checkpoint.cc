#include "scheduler/jobs/job_checkpoint.h"

#include <utility>
#include <vector>

#include "common/status.h"

namespace herald::scheduler {

absl::StatusOr<std::string> CheckpointJob(ps::PsClient& ps, const checkpoint::ManifestParts& parts,
                                          const std::string& dir) {
  HERALD_ASSIGN_OR_RETURN(std::vector<proto::CheckpointShard> shards,
                          ps.CheckpointShards(parts.job_id, parts.iteration, dir));
  return checkpoint::WriteManifest(dir, checkpoint::AssembleManifest(parts, std::move(shards)));
}

}  // namespace herald::scheduler
