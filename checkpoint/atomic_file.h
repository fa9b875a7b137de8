#pragma once
// Checkpoint files written whole or not at all, and the status of a failed
// file operation.

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace herald::checkpoint {

// The status for file operation `what` on `path` that failed with `err`
// (an errno value), naming both and the system's message. The code says
// what kind of failure it is: RESOURCE_EXHAUSTED for a full disk or quota
// (ENOSPC, EDQUOT, EFBIG), PERMISSION_DENIED for a refused or read-only
// file system (EACCES, EPERM, EROFS), INTERNAL for anything else (EIO...).
absl::Status FileError(const std::string& what, const std::string& path, int err);

// kFsynced: the file survives a crash once written. kPageCache: no fsync,
// for a file whose loss costs only time (a data cursor, which checks
// itself): after a crash it may be missing or partial.
enum class Durability { kFsynced, kPageCache };

// Writes `bytes` to `path` through a temporary file in the same directory,
// flushed and (kFsynced) fsynced, then renamed over `path` (the directory
// fsynced too): a reader sees the old file or the whole new one. On error
// the temporary file is removed and `path` is unchanged. Errors:
// FileError's.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes,
                                 Durability durability = Durability::kFsynced);

// fsyncs the directory holding `path`, so that a rename into it is durable.
absl::Status FsyncDirOf(const std::string& path);

}  // namespace herald::checkpoint
