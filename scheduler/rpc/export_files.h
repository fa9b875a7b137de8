#pragma once
// The files that make up one export directory (docs/export.md), as the
// scheduler streams them to a client on another machine (JobService
// DownloadExport).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/scheduler.pb.h"

namespace herald::scheduler {

struct ExportFiles {
  proto::ModelExport model;  // DIR/MODEL
  // Relative to DIR, in the order a client writes them: the tables'
  // manifest, its shard files and the dense file first, MODEL last (a
  // directory with MODEL is a complete export).
  std::vector<std::string> files;
};

// Errors: InvalidArgument (a relative `dir`, or a file outside it),
// NotFound (no DIR/MODEL), DataLoss (MODEL or the tables' manifest does
// not parse), naming the file.
absl::StatusOr<ExportFiles> ListExportFiles(const std::string& dir);

}  // namespace herald::scheduler
