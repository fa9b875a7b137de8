#pragma once
// The job the cluster benchmarks train (bench/pipeline_bench,
// bench/disk_tier_bench): Wide&Deep, 26 tables of one dimension, MLP
// 512-256-128, Adam + Adagrad, one epoch of a Herald binary file without a
// shuffle buffer, cache fraction 0.1; and that file, generated.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace herald::bench {

// `policy`: "vanilla" or anything else for herald.
proto::JobSpec WideAndDeepBenchJob(const std::string& name, const std::string& data, uint32_t dim,
                                   const std::string& policy, uint32_t workers,
                                   uint32_t global_batch);

// `rows` entity-correlated rows (heraldctl gen-data, seed 1, Criteo
// cardinalities × 0.05) in a fresh test directory named `dir_name`.
// Returns the file's path. Errors: Internal naming the command.
absl::StatusOr<std::string> GenerateBenchData(const std::string& dir_name, uint64_t rows);

}  // namespace herald::bench
