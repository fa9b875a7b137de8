#pragma once
// A deterministic training-like workload for a PsClient: `num_workers`
// simulated workers per iteration fetch overlapping key sets, push
// gradients, sometimes write back rows they "owned", and report done. Any
// correct cluster (any shard count, in-process or over gRPC, restored from a
// checkpoint or not) must end with bitwise the same rows.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "ps_server/client/ps_client.h"

namespace herald::ps::testing {

// Two tables: dim 8 Adagrad and dim 4 Adam (exercises per-table optimizers).
proto::JobSpec ScenarioSpec();

struct ScenarioOptions {
  std::string job_id = "scenario";
  uint32_t num_workers = 2;
  uint32_t keys_per_worker = 200;
  uint64_t key_space = 600;  // keys drawn from [0, key_space): workers overlap
};

// Runs iterations [first, last] (the job must be started and at `first`).
absl::Status RunIterations(PsClient& client, const ScenarioOptions& options, uint64_t first,
                           uint64_t last);

// Rows of every key in [0, key_space) of both tables, fetched for `iteration`.
absl::StatusOr<std::vector<TableRows>> FetchAll(PsClient& client, const ScenarioOptions& options,
                                                uint64_t iteration);

// Checkpoints the scenario's job at `iteration` into `dir` as the
// scheduler does: every shard's file, then the manifest. Returns its path.
absl::StatusOr<std::string> CheckpointScenario(PsClient& client, const ScenarioOptions& options,
                                               uint64_t iteration, const std::string& dir);

}  // namespace herald::ps::testing
