#pragma once
// How many rows each worker's cache keeps, per table, from one pass over the
// job's training data (scheduling.cache_fraction of the distinct keys, or
// scheduling.cache_rows_per_worker), and with scheduling.warm_start the
// hottest keys to preload. Memory is bounded whatever the data (sketches).
// With a budget and single-hot features, from the spec alone (no pass).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"
#include "proto/job.pb.h"

namespace herald::scheduler {

// The cache sizes a job's planner uses, from a pass over its training data.
struct JobCacheSizing {
  std::vector<uint32_t> capacity;  // per table, rows kept between iterations
  std::vector<uint32_t> slots;     // per table, slot array size
  // scheduling.warm_start: per table, the `capacity` most used keys of the
  // training data (one epoch), hottest first; empty otherwise.
  std::vector<std::vector<Key>> warm_keys;
};

// Errors: the data source's.
//
// Without reading the data where it need not be read: with
// scheduling.cache_rows_per_worker (the tables' budget), no warm start,
// and every feature's ids per sample bounded (SchemaKeysPerSample),
// the sizes follow from the spec alone (a followed directory's future
// files cannot exceed them). SizingReadsData says which.
//
// Nor where the job trains Herald binary files that all store their key
// statistics (common/data/binary_key_stats.h): they give the counts a pass
// over the samples gives (SizeFromKeyStats).
absl::StatusOr<JobCacheSizing> SizeJobCaches(const proto::JobSpec& spec, uint32_t num_workers);
bool SizingReadsData(const proto::JobSpec& spec);

// The sizes from the stored key statistics of the job's binary files, not
// reading a sample: the distinct keys of each table as a pass counts them,
// and as a table's most keys in one sample the sum of its features' most
// ids (the same where one feature looks the table up, else a bound).
// nullopt where they do not stand for the pass: data not binary, a file
// without statistics, a held-out split, id admission or expiry, a warm
// start, fewer iterations than one pass over the samples, or fewer
// samples than one global batch (the pass says so), damaged statistics
// (the pass reads the samples, and says whether they are damaged too).
std::optional<JobCacheSizing> SizeFromKeyStats(const proto::JobSpec& spec, uint32_t num_workers);

// Each table's most keys in one sample where the schema bounds it: the sum
// over the features looking it up of their most ids (one for Criteo TSV,
// binary version 1, generated data and columns without a multi-hot
// separator; a multi-hot CSV column's max_ids); nullopt where a multi-hot
// feature has no max_ids.
std::optional<std::vector<uint32_t>> SchemaKeysPerSample(const proto::JobSpec& spec);

// A sizing as bytes (kept beside each periodic checkpoint, so that a run
// continuing the same training need not read its data again), and back for
// a job of `tables` tables. Errors: DataLoss naming the field that does not
// fit.
std::string SaveCacheSizing(const JobCacheSizing& sizing);
absl::StatusOr<JobCacheSizing> LoadCacheSizing(std::string_view bytes, size_t tables);

}  // namespace herald::scheduler
