#pragma once
// Reads a model exported by `heraldctl export` (format: docs/export.md), or
// a periodic checkpoint (docs/checkpoints.md), into
// memory: the MODEL manifest, the dense parameter vector (CRC checked) and
// every embedding row of every table (each shard file's CRC checked).
//
//   absl::StatusOr<herald::tools::ExportedModel> m = herald::tools::ReadModelExport(dir);
//   const float* row = m->tables[t].Find(key);   // nullptr: never trained
//   // embedding = row[0 .. dim), optimizer state = row[dim .. row_floats)
//
// A key missing from a table was never trained; the trained system gives it
// its initial row, math::InitialRow(spec.seed, table, key, ...).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/ids.h"
#include "proto/scheduler.pb.h"

namespace herald::tools {

struct ExportedTable {
  uint32_t dim = 0;
  uint32_t row_floats = 0;                   // dim + optimizer state
  std::vector<Key> keys;                     // in file order
  std::vector<float> rows;                   // keys.size() × row_floats
  absl::flat_hash_map<Key, uint64_t> index;  // key -> position in `keys`

  // The row of `key` (row_floats values), or nullptr.
  const float* Find(Key key) const;
};

struct ExportedModel {
  proto::ModelExport manifest;
  std::vector<float> dense;
  std::vector<ExportedTable> tables;  // by table id
};

// An increment (MODEL names a `base`) is read with its chain of bases: the
// oldest (a whole export) first, each newer one's rows over it, the newest
// one's dense parameters and manifest; a key's position in `keys` is its
// first appearance in the chain.
// Errors: NotFound (no MODEL, here or in a base, named), DataLoss naming
// the file and the problem (bad manifest, CRC mismatch, short dense file,
// unknown table, duplicate key, a loop of bases, tables that differ).
absl::StatusOr<ExportedModel> ReadModelExport(const std::string& dir);

// The same from a periodic checkpoint (checkpoint.every_iterations): `path`
// is its MANIFEST or its iteration directory. The manifest's `iterations`
// is the checkpoint's iteration + 1, its dense vector the parameters
// without the optimizer's state. Errors: as ReadModelExport;
// FailedPrecondition for a checkpoint without the dense half.
absl::StatusOr<ExportedModel> ReadCheckpointModel(const std::string& path);

}  // namespace herald::tools
