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

#include "absl/status/statusor.h"
#include "proto/checkpoint.pb.h"

namespace herald::ps {

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

}  // namespace herald::ps
