#include "tools/model_reader.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/crc32.h"
#include "common/status.h"
#include "google/protobuf/text_format.h"
#include "ps_server/checkpoint/manifest.h"
#include "ps_server/checkpoint/shard_file.h"

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

}  // namespace

const float* ExportedTable::Find(Key key) const {
  auto it = index.find(key);
  return it == index.end() ? nullptr : rows.data() + it->second * row_floats;
}

absl::StatusOr<ExportedModel> ReadModelExport(const std::string& dir) {
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
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest tables, ps::ReadManifest(manifest_path));
  model.tables.resize(m.spec().tables_size());
  for (const proto::CheckpointShard& shard : tables.shards()) {
    const std::string path = absl::StrCat(ps::ManifestDir(manifest_path), "/", shard.file());
    ps::ShardFileHeader header;
    ExportedTable* table = nullptr;
    absl::StatusOr<ps::ShardFileInfo> info = ps::ReadShardFile(
        path, &header,
        [&](const ps::ShardTableHeader& t) -> absl::Status {
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
  return model;
}

}  // namespace herald::tools
