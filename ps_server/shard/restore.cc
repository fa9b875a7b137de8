#include "ps_server/shard/restore.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/shard_file.h"
#include "common/router.h"
#include "common/status.h"

namespace herald::ps {

absl::StatusOr<uint64_t> RestoreShard(const proto::CheckpointManifest& manifest,
                                      const std::string& manifest_dir, JobShard* shard) {
  const JobShardOptions& o = shard->options();
  if (o.first_iteration != manifest.iteration() + 1) {
    return absl::InvalidArgumentError(absl::StrCat("shard starts at iteration ", o.first_iteration,
                                                   ", checkpoint is of iteration ",
                                                   manifest.iteration()));
  }
  auto router = KeyRouter::Create(o.num_shards);
  if (!router.ok()) return router.status();
  const bool same_layout = manifest.num_shards() == o.num_shards;
  uint64_t loaded = 0;
  for (const proto::CheckpointShard& entry : manifest.shards()) {
    if (same_layout && entry.shard() != o.shard) continue;
    const std::string path = manifest_dir + "/" + entry.file();
    checkpoint::ShardFileHeader header;
    checkpoint::ShardTableHeader table;
    auto info = checkpoint::ReadShardFile(
        path, &header,
        [&](const checkpoint::ShardTableHeader& t) -> absl::Status {
          table = t;
          if (t.table_id >= o.tables.size()) {
            return absl::InvalidArgumentError(absl::StrCat(
                path, ": table ", t.table_id, " is not in the job (", o.tables.size(), " tables)"));
          }
          const TableOptions& want = o.tables[t.table_id];
          const uint32_t rf = math::RowFloats(want.optimizer.kind, want.dim);
          if (t.dim != want.dim || t.row_floats != rf) {
            return absl::InvalidArgumentError(absl::StrCat(
                path, ": table ", t.table_id, " has dim ", t.dim, " and ", t.row_floats,
                " floats per row; the job wants dim ", want.dim, " and ", rf));
          }
          return absl::OkStatus();
        },
        [&](Key key, uint64_t version, const float* row) -> absl::Status {
          if (!same_layout && router->ShardOf(TableId(table.table_id), key).value() != o.shard) {
            return absl::OkStatus();
          }
          ++loaded;
          return shard->RestoreRow(TableId(table.table_id), key, version, row);
        });
    if (!info.ok()) return info.status();
    const std::string crc = absl::StrFormat("%08x", info->crc32);
    if (crc != entry.checksum()) {
      return absl::DataLossError(absl::StrCat(path, ": checksum ", crc,
                                              " does not match the manifest's ", entry.checksum()));
    }
    if (header.job_id != manifest.job_id() || header.iteration != manifest.iteration()) {
      return absl::DataLossError(absl::StrCat(
          path, ": holds job ", header.job_id, " iteration ", header.iteration,
          ", the manifest says job ", manifest.job_id(), " iteration ", manifest.iteration()));
    }
  }
  HERALD_RETURN_IF_ERROR(shard->FinishRestore());
  return loaded;
}

}  // namespace herald::ps
