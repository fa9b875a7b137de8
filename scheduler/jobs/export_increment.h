#pragma once
// Incremental exports (docs/export.md, "Incremental exports"): an export
// whose shard files hold only the rows that differ from the model of an
// earlier export, the chain of bases followed to a whole one.
//
// A row differs when the chain lacks its key or holds it with another
// version (a row's version counts its committed updates; the PS stamps
// every change). Keys are never removed from a job's tables, so the rows
// of the chain overlaid with the increment's are the model's.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "proto/checkpoint.pb.h"

namespace herald::scheduler {

struct IncrementSize {
  uint64_t rows = 0, full_rows = 0;    // kept, and in the whole files
  uint64_t bytes = 0, full_bytes = 0;  // of the shard files
};

// Rewrites in place the shard files of `manifest` (at `manifest_path`,
// under the export directory `out_dir`) to the rows that differ from the
// export chain ending at `base_dir`, and updates and rewrites the manifest.
// Errors: NotFound / DataLoss naming a base's file (missing, damaged, a
// cycle of bases); InvalidArgument for a base that is not an earlier
// export of this model (row widths differ, or it holds rows the model does
// not); the writes'.
absl::StatusOr<IncrementSize> KeepChangedRows(const std::string& out_dir,
                                              const std::string& manifest_path,
                                              proto::CheckpointManifest* manifest,
                                              const std::string& base_dir);

}  // namespace herald::scheduler
