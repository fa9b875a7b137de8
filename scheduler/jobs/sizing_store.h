#pragma once
// Cache sizings kept across jobs (the scheduler's --state_dir/sizing): a job
// whose sizing pass would read the same data the same way as an earlier
// job's (the same files, unchanged; the same split, batch, tables, sizing
// fields and worker count) takes that job's sizing instead of reading its
// data again. A sweep of learning rates over one dataset reads it once.
//
// The key is the pass's whole input, compared byte for byte on load (the
// file name is only its checksum), so a sizing is reused only for the very
// pass that made it: the plans, and so the model's bits, are those of a
// fresh pass. A file is identified by its path, device, inode, size,
// modification time and status-change time: a rewrite, even one that
// restores the size and modification time (touch -d), changes the last,
// which no user call can set. The directory keeps the kSizingsKept most
// recently saved sizings; a save removes older ones.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "scheduler/jobs/job_cache_sizing.h"

namespace herald::scheduler {

// Sizings a store directory keeps (each a few KiB to a few MiB).
constexpr size_t kSizingsKept = 64;

// What SizeJobCaches reads and computes from, as bytes: the data source
// with every input file's identity (above), the schema,
// the batch, the iterations and epochs (the pass reads the batches trained,
// at most one epoch), the tables, the seed, the sizing fields of the
// scheduling and the worker count. Errors: the inputs' (a missing file: NotFound).
absl::StatusOr<std::string> SizingKey(const proto::JobSpec& spec, uint32_t num_workers);

// The sizing saved in `dir` for `key`, for a job of `tables` tables.
// Errors: NotFound (none saved for this key), DataLoss (a damaged file).
absl::StatusOr<JobCacheSizing> LoadSizing(const std::string& dir, const std::string& key,
                                          size_t tables);
// Saves `sizing` for `key` (atomically; creates `dir`), then removes the
// oldest saved sizings beyond kSizingsKept (a loaded one counts as saved
// when it was loaded: its file's time is refreshed).
absl::Status SaveSizing(const std::string& dir, const std::string& key,
                        const JobCacheSizing& sizing);

}  // namespace herald::scheduler
