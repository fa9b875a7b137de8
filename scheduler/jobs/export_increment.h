#pragma once
// Incremental exports (docs/export.md, "Incremental exports"): an export
// whose shard files hold only the rows that differ from the model of an
// earlier export, the chain of bases followed to a whole one.
//
// A row differs when the chain lacks its key or holds it with another
// version (a row's version counts its committed updates; the PS stamps
// every change) or other floats (a key deleted by row expiry and created
// again may reach its old row's version). Keys leave a job's tables only by row expiry
// (tables[].expiry): the chain's keys the model lacks are then the
// increment's deletions, which a reader removes from the chain before it
// overlays the increment's rows; so the rows of the chain, with each
// increment's deletions and rows applied in order, are the model's.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/deleted_rows.h"
#include "proto/checkpoint.pb.h"

namespace herald::scheduler {

struct IncrementSize {
  uint64_t rows = 0, full_rows = 0;    // kept, and in the whole files
  uint64_t bytes = 0, full_bytes = 0;  // of the shard files
  // The chain's rows the model no longer has, ascending.
  std::vector<checkpoint::DeletedRow> deleted;
};

// Rewrites in place the shard files of `manifest` (at `manifest_path`,
// under the export directory `out_dir`) to the rows that differ from the
// export chain ending at `base_dir`, and updates and rewrites the manifest.
// Errors: NotFound / DataLoss naming a base's file (missing, damaged, a
// cycle of bases); InvalidArgument for a base that is not an earlier
// export of this model (row widths differ, or it holds rows the model does
// not); the writes'.
// `rows_expire`: the model's spec has row expiry, so chain rows it lacks
// are deletions (without it they mean `base_dir` is not of this model).
absl::StatusOr<IncrementSize> KeepChangedRows(const std::string& out_dir,
                                              const std::string& manifest_path,
                                              proto::CheckpointManifest* manifest,
                                              const std::string& base_dir, bool rows_expire);

}  // namespace herald::scheduler
