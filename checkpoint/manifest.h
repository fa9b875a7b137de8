#pragma once
// Checkpoint layout and manifests (docs/checkpoints.md):
//
//   <dir>/<job_id>/iter-<iteration, 12 digits>/shard-<i>-of-<n>.hsf
//   <dir>/<job_id>/iter-<iteration, 12 digits>/MANIFEST   (text proto)
//
// The manifest is written last, atomically, once every shard file is in
// place; an iteration directory without MANIFEST is an unfinished checkpoint
// and is ignored by FindLatestManifest.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/checkpoint.pb.h"

namespace herald::checkpoint {

// The dense half of a job's checkpoint, a file the scheduler wrote into the
// checkpoint's iteration directory before the shards checkpoint; recorded in
// the manifest (dense_*).
struct DenseCheckpointFile {
  std::string file;  // relative to the iteration directory
  uint64_t floats = 0;
  uint64_t state_floats = 0;
  std::string checksum;  // crc32, 8 hex digits
  // The parameters after the job's last iteration only (state_floats 0):
  // the manifest is marked final (CheckpointManifest.final).
  bool final = false;
};

// The scheduler's planner state in a job's checkpoint, a file written into
// the checkpoint's iteration directory before the shards checkpoint;
// recorded in the manifest (planner_*).
struct PlannerCheckpointFile {
  std::string file;  // relative to the iteration directory
  uint64_t bytes = 0;
  std::string checksum;  // crc32, 8 hex digits
};

// What a manifest records besides the shards' files.
struct ManifestParts {
  std::string job_id;
  uint64_t iteration = 0;  // the last committed iteration captured
  proto::JobSpec spec;     // the job as it ran
  uint32_t num_workers = 0;
  const DenseCheckpointFile* dense = nullptr;      // optional
  const PlannerCheckpointFile* planner = nullptr;  // optional
};

// The manifest of a checkpoint whose shard files are `shards` (by shard
// index, as PsClient::CheckpointShards returns them).
proto::CheckpointManifest AssembleManifest(const ManifestParts& parts,
                                           std::vector<proto::CheckpointShard> shards);

std::string CheckpointIterationDir(const std::string& dir, const std::string& job_id,
                                   uint64_t iteration);
std::string ShardFileName(uint32_t shard, uint32_t num_shards);
std::string ManifestPath(const std::string& dir, const std::string& job_id, uint64_t iteration);

// Creates `path`'s directories. Errors: Internal naming the directory.
absl::Status MakeDirs(const std::string& path);

// Writes `manifest` to ManifestPath(dir, ...) via a temp file + rename.
absl::StatusOr<std::string> WriteManifest(const std::string& dir,
                                          const proto::CheckpointManifest& manifest);

// Reads and checks a manifest: shard list complete and in order.
// Errors: NotFound, DataLoss naming the file and the problem.
absl::StatusOr<proto::CheckpointManifest> ReadManifest(const std::string& path);

// The manifest of the newest complete checkpoint of `job_id` under `dir`.
// Errors: NotFound if there is none.
absl::StatusOr<std::string> FindLatestManifest(const std::string& dir, const std::string& job_id);

// Keeps the newest `keep_last` complete checkpoints of `job_id` under `dir`
// (0: all) and removes the older ones, and every unfinished one older than
// the newest complete one. Returns how many iteration directories it
// removed. Errors: Internal naming a directory that could not be removed.
absl::StatusOr<int> PruneCheckpoints(const std::string& dir, const std::string& job_id,
                                     uint32_t keep_last);

// Directory holding a manifest (shard file names are relative to it).
std::string ManifestDir(const std::string& manifest_path);

// OK when every file `manifest` (at `manifest_path`) names is there with
// the checksum it records: the shard files, and the dense and planner
// files where named. Errors: DataLoss naming the first file missing or
// damaged.
absl::Status CheckManifestFiles(const std::string& manifest_path,
                                const proto::CheckpointManifest& manifest);

}  // namespace herald::checkpoint
