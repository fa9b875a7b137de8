#include "tools/model_reader.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "checkpoint/deleted_rows.h"
#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "common/crc32.h"
#include "common/status.h"
#include "google/protobuf/text_format.h"

namespace herald::tools {
namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::StatusOr<std::vector<float>> ReadDense(const std::string& path, uint64_t floats,
                                             const std::string& crc) {
  HERALD_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  if (bytes.size() != floats * sizeof(float)) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", bytes.size(), " bytes, the manifest says ", floats, " floats"));
  }
  if (Crc32Hex(Crc32(bytes.data(), bytes.size())) != crc) {
    return absl::DataLossError(absl::StrCat(path, ": CRC does not match the manifest's ", crc));
  }
  std::vector<float> dense(floats);
  std::memcpy(dense.data(), bytes.data(), bytes.size());
  return dense;
}

// Every row of the shard files the checkpoint manifest `tables` (at
// `manifest_path`) lists, into out->tables (one per table of out's spec).
absl::Status ReadTables(const std::string& manifest_path, const proto::CheckpointManifest& tables,
                        ExportedModel* out) {
  ExportedModel& model = *out;
  model.tables.resize(model.manifest.spec().tables_size());
  for (const proto::CheckpointShard& shard : tables.shards()) {
    const std::string path =
        absl::StrCat(checkpoint::ManifestDir(manifest_path), "/", shard.file());
    checkpoint::ShardFileHeader header;
    ExportedTable* table = nullptr;
    absl::StatusOr<checkpoint::ShardFileInfo> info = checkpoint::ReadShardFile(
        path, &header,
        [&](const checkpoint::ShardTableHeader& t) -> absl::Status {
          if (t.table_id >= model.tables.size()) {
            return absl::DataLossError(
                absl::StrCat(path, ": table ", t.table_id, " is not in the spec"));
          }
          table = &model.tables[t.table_id];
          table->dim = t.dim;
          table->row_floats = t.row_floats;
          table->keys.reserve(table->keys.size() + t.rows);
          table->rows.reserve(table->rows.size() + t.rows * t.row_floats);
          return absl::OkStatus();
        },
        [&](Key key, uint64_t, const float* row) -> absl::Status {
          if (!table->index.emplace(key, table->keys.size()).second) {
            return absl::DataLossError(absl::StrCat(path, ": key ", key, " appears twice"));
          }
          table->keys.push_back(key);
          table->rows.insert(table->rows.end(), row, row + table->row_floats);
          return absl::OkStatus();
        });
    if (!info.ok()) return info.status();
    if (Crc32Hex(info->crc32) != shard.checksum()) {
      return absl::DataLossError(absl::StrCat(path, ": CRC ", Crc32Hex(info->crc32),
                                              ", manifest says ", shard.checksum()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const float* ExportedTable::Find(Key key) const {
  auto it = index.find(key);
  return it == index.end() ? nullptr : rows.data() + it->second * row_floats;
}

namespace {

// One export directory as it is (an increment's rows alone), and the
// rows it deletes from its chain (row expiry; none for a whole export).
absl::StatusOr<ExportedModel> ReadOneExport(const std::string& dir,
                                            std::vector<checkpoint::DeletedRow>* deleted) {
  const std::string model_path = absl::StrCat(dir, "/MODEL");
  HERALD_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(model_path));
  ExportedModel model;
  if (!google::protobuf::TextFormat::ParseFromString(text, &model.manifest)) {
    return absl::DataLossError(absl::StrCat(model_path, ": not a ModelExport text proto"));
  }
  const proto::ModelExport& m = model.manifest;
  if (m.format_version() != 1) {
    return absl::DataLossError(
        absl::StrCat(model_path, ": format_version ", m.format_version(), " (this reader: 1)"));
  }
  HERALD_ASSIGN_OR_RETURN(model.dense, ReadDense(absl::StrCat(dir, "/", m.dense_file()),
                                                 m.dense_floats(), m.dense_crc32()));

  const std::string manifest_path = absl::StrCat(dir, "/", m.tables_manifest());
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest tables,
                          checkpoint::ReadManifest(manifest_path));
  HERALD_RETURN_IF_ERROR(ReadTables(manifest_path, tables, &model));
  deleted->clear();
  if (!m.deleted_file().empty()) {
    HERALD_ASSIGN_OR_RETURN(*deleted,
                            checkpoint::ReadDeletedRows(absl::StrCat(dir, "/", m.deleted_file()),
                                                        m.deleted_rows(), m.deleted_crc32()));
  }
  return model;
}

// Removes `deleted`'s keys from `model`'s tables (the survivors keep their
// order).
void Delete(const std::vector<checkpoint::DeletedRow>& deleted, ExportedModel* model) {
  if (deleted.empty()) return;
  std::vector<absl::flat_hash_set<Key>> gone(model->tables.size());
  for (const checkpoint::DeletedRow& d : deleted) {
    if (d.table < gone.size()) gone[d.table].insert(d.key);
  }
  for (size_t t = 0; t < model->tables.size(); ++t) {
    if (gone[t].empty()) continue;
    ExportedTable& table = model->tables[t];
    size_t kept = 0;
    for (size_t i = 0; i < table.keys.size(); ++i) {
      if (gone[t].contains(table.keys[i])) continue;
      table.keys[kept] = table.keys[i];
      std::copy(table.rows.begin() + i * table.row_floats,
                table.rows.begin() + (i + 1) * table.row_floats,
                table.rows.begin() + kept * table.row_floats);
      ++kept;
    }
    table.keys.resize(kept);
    table.rows.resize(kept * table.row_floats);
    table.index.clear();
    for (size_t i = 0; i < kept; ++i) table.index.emplace(table.keys[i], i);
  }
}

// Bases followed at most: a longer chain is a cycle or a mistake.
constexpr int kMaxChain = 10000;

// `newer`'s rows over `model`'s (replaced or added); its dense parameters
// and manifest replace the model's.
absl::Status Overlay(ExportedModel newer, const std::string& dir, ExportedModel* model) {
  if (newer.tables.size() != model->tables.size()) {
    return absl::DataLossError(absl::StrCat(dir, ": ", newer.tables.size(),
                                            " tables, its base has ", model->tables.size()));
  }
  for (size_t t = 0; t < newer.tables.size(); ++t) {
    const ExportedTable& from = newer.tables[t];
    ExportedTable& to = model->tables[t];
    if (from.keys.empty()) continue;
    if (to.row_floats != 0 && from.row_floats != to.row_floats) {
      return absl::DataLossError(absl::StrCat(dir, ": table ", t, " has ", from.row_floats,
                                              " floats per row, its base ", to.row_floats));
    }
    to.dim = from.dim;
    to.row_floats = from.row_floats;
    for (size_t i = 0; i < from.keys.size(); ++i) {
      const float* row = from.rows.data() + i * from.row_floats;
      auto [it, added] = to.index.try_emplace(from.keys[i], to.keys.size());
      if (added) {
        to.keys.push_back(from.keys[i]);
        to.rows.insert(to.rows.end(), row, row + from.row_floats);
      } else {
        std::copy(row, row + from.row_floats, to.rows.begin() + it->second * to.row_floats);
      }
    }
  }
  model->dense = std::move(newer.dense);
  model->manifest = std::move(newer.manifest);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExportedModel> ReadModelExport(const std::string& dir) {
  std::vector<std::vector<checkpoint::DeletedRow>> deleted(1);
  HERALD_ASSIGN_OR_RETURN(ExportedModel newest, ReadOneExport(dir, &deleted.back()));
  if (newest.manifest.base().empty()) return newest;
  // An increment: the chain of bases down to a whole export, then each
  // increment over it, oldest first (its deletions, then its rows).
  std::vector<std::string> chain = {dir};
  std::vector<ExportedModel> increments;
  increments.push_back(std::move(newest));
  for (;;) {
    const std::string base = increments.back().manifest.base();
    if (base.empty()) break;
    if (chain.size() == kMaxChain || std::find(chain.begin(), chain.end(), base) != chain.end()) {
      return absl::DataLossError(absl::StrCat(dir, ": its chain of bases loops at ", base));
    }
    absl::StatusOr<ExportedModel> read = ReadOneExport(base, &deleted.emplace_back());
    if (!read.ok()) {
      return absl::Status(read.status().code(),
                          absl::StrCat(chain.back(), "'s base: ", read.status().message()));
    }
    chain.push_back(base);
    increments.push_back(*std::move(read));
  }
  ExportedModel model = std::move(increments.back());
  for (size_t i = increments.size() - 1; i-- > 0;) {
    Delete(deleted[i], &model);
    HERALD_RETURN_IF_ERROR(Overlay(std::move(increments[i]), chain[i], &model));
  }
  return model;
}

absl::StatusOr<ExportedModel> ReadCheckpointModel(const std::string& path) {
  std::string manifest_path = path;
  while (manifest_path.size() > 1 && manifest_path.back() == '/') manifest_path.pop_back();
  if (!absl::EndsWith(manifest_path, "/MANIFEST")) manifest_path += "/MANIFEST";
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest tables,
                          checkpoint::ReadManifest(manifest_path));
  if (tables.dense_file().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(manifest_path,
                     ": a checkpoint without the dense half (a final or PS-only one); "
                     "evaluate the job's export instead"));
  }
  ExportedModel model;
  model.manifest.set_format_version(1);
  model.manifest.set_job_id(tables.job_id());
  model.manifest.set_iterations(tables.iteration() + 1);
  *model.manifest.mutable_spec() = tables.spec();
  model.manifest.set_tables_manifest("MANIFEST");
  // dense.bin holds the parameters, then the optimizer's state.
  const std::string dense_path =
      absl::StrCat(checkpoint::ManifestDir(manifest_path), "/", tables.dense_file());
  HERALD_ASSIGN_OR_RETURN(model.dense,
                          ReadDense(dense_path, tables.dense_floats() + tables.dense_state_floats(),
                                    tables.dense_checksum()));
  model.dense.resize(tables.dense_floats());
  model.manifest.set_dense_file(tables.dense_file());
  model.manifest.set_dense_floats(tables.dense_floats());
  HERALD_RETURN_IF_ERROR(ReadTables(manifest_path, tables, &model));
  return model;
}

}  // namespace herald::tools
