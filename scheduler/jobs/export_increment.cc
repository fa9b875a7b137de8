#include "scheduler/jobs/export_increment.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "common/status.h"
#include "google/protobuf/text_format.h"
#include "proto/scheduler.pb.h"

namespace herald::scheduler {
namespace {

// Bases followed at most: a longer chain is a cycle or a mistake.
constexpr int kMaxChain = 10000;

absl::StatusOr<proto::ModelExport> ReadModelFile(const std::string& dir) {
  const std::string path = dir + "/MODEL";
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": no such export"));
  std::stringstream text;
  text << in.rdbuf();
  proto::ModelExport m;
  if (!google::protobuf::TextFormat::ParseFromString(text.str(), &m)) {
    return absl::DataLossError(absl::StrCat(path, ": not a ModelExport text proto"));
  }
  return m;
}

// A row as the chain has it: its version and a hash of its floats. With
// row expiry a key deleted and created again can reach the version its
// old row had; the hash tells the two apart.
struct ChainRow {
  uint64_t version;
  uint64_t hash;
  bool operator==(const ChainRow& o) const { return version == o.version && hash == o.hash; }
};

ChainRow RowOf(uint64_t version, const float* row, uint32_t floats) {
  return {version, absl::HashOf(absl::string_view(reinterpret_cast<const char*>(row),
                                                  size_t{floats} * sizeof(float)))};
}

// Per table: every key of the chain's model and its newest row (the newest
// export holding the key has it, unless an export newer still deleted
// it). `widths` per table from the chain.
struct ChainVersions {
  std::vector<absl::flat_hash_map<Key, ChainRow>> tables;
  std::vector<uint32_t> row_floats;
};

absl::StatusOr<ChainVersions> ReadChain(const std::string& base_dir) {
  ChainVersions chain;
  absl::flat_hash_set<std::string> seen;
  // Keys a newer export of the chain deleted: the older exports' rows of
  // them are gone.
  absl::flat_hash_set<std::pair<uint32_t, Key>> deleted;
  std::string dir = base_dir;
  for (int depth = 0; !dir.empty(); ++depth) {
    if (depth == kMaxChain || !seen.insert(dir).second) {
      return absl::DataLossError(absl::StrCat(base_dir, ": its chain of bases loops at ", dir));
    }
    HERALD_ASSIGN_OR_RETURN(proto::ModelExport m, ReadModelFile(dir));
    std::vector<checkpoint::DeletedRow> deleted_here;
    if (!m.deleted_file().empty()) {
      HERALD_ASSIGN_OR_RETURN(
          deleted_here, checkpoint::ReadDeletedRows(dir + "/" + m.deleted_file(), m.deleted_rows(),
                                                    m.deleted_crc32()));
    }
    const std::string manifest_path = absl::StrCat(dir, "/", m.tables_manifest());
    HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest manifest,
                            checkpoint::ReadManifest(manifest_path));
    HERALD_RETURN_IF_ERROR(checkpoint::CheckManifestFiles(manifest_path, manifest));
    const std::string files = checkpoint::ManifestDir(manifest_path);
    for (const proto::CheckpointShard& shard : manifest.shards()) {
      checkpoint::ShardFileHeader header;
      absl::flat_hash_map<Key, ChainRow>* table = nullptr;
      uint32_t table_id = 0, floats = 0;
      absl::flat_hash_set<Key> here;  // keys of this file: newer than the bases'
      HERALD_RETURN_IF_ERROR(checkpoint::ReadShardFile(
                                 files + "/" + shard.file(), &header,
                                 [&](const checkpoint::ShardTableHeader& t) {
                                   if (t.table_id >= chain.tables.size()) {
                                     chain.tables.resize(t.table_id + 1);
                                     chain.row_floats.resize(t.table_id + 1, 0);
                                   }
                                   chain.row_floats[t.table_id] = t.row_floats;
                                   table = &chain.tables[t.table_id];
                                   table_id = t.table_id;
                                   floats = t.row_floats;
                                   return absl::OkStatus();
                                 },
                                 [&](Key key, uint64_t version, const float* row) {
                                   if (deleted.contains({table_id, key})) return absl::OkStatus();
                                   // A newer export's row stays.
                                   table->try_emplace(key, RowOf(version, row, floats));
                                   return absl::OkStatus();
                                 })
                                 .status());
    }
    for (const checkpoint::DeletedRow& d : deleted_here) deleted.insert({d.table, d.key});
    dir = m.base();
  }
  return chain;
}

}  // namespace

absl::StatusOr<IncrementSize> KeepChangedRows(const std::string& out_dir,
                                              const std::string& manifest_path,
                                              proto::CheckpointManifest* manifest,
                                              const std::string& base_dir, bool rows_expire) {
  HERALD_ASSIGN_OR_RETURN(ChainVersions chain, ReadChain(base_dir));
  const std::string dir = checkpoint::ManifestDir(manifest_path);
  IncrementSize size;
  // Each chain key the model holds is taken out of `chain`: the keys left
  // at the end are the model's deletions.
  for (proto::CheckpointShard& shard : *manifest->mutable_shards()) {
    const std::string path = dir + "/" + shard.file();
    // The changed rows of each table, read whole, then written back.
    struct Table {
      checkpoint::ShardTableHeader header;
      std::vector<Key> keys;
      std::vector<uint64_t> versions;
      std::vector<float> rows;
    };
    std::vector<Table> tables;
    checkpoint::ShardFileHeader header;
    HERALD_ASSIGN_OR_RETURN(
        checkpoint::ShardFileInfo whole,
        checkpoint::ReadShardFile(
            path, &header,
            [&](const checkpoint::ShardTableHeader& t) {
              if (t.table_id < chain.row_floats.size() && chain.row_floats[t.table_id] != 0 &&
                  chain.row_floats[t.table_id] != t.row_floats) {
                return absl::InvalidArgumentError(
                    absl::StrCat("since ", base_dir, ": table ", t.table_id, " has ",
                                 chain.row_floats[t.table_id], " floats per row there, ",
                                 t.row_floats, " here: not a base of this model"));
              }
              tables.push_back({t, {}, {}, {}});
              return absl::OkStatus();
            },
            [&](Key key, uint64_t version, const float* row) {
              Table& t = tables.back();
              const uint32_t id = t.header.table_id;
              if (id < chain.tables.size()) {
                auto it = chain.tables[id].find(key);
                if (it != chain.tables[id].end()) {
                  const bool same = it->second == RowOf(version, row, t.header.row_floats);
                  chain.tables[id].erase(it);
                  if (same) return absl::OkStatus();
                }
              }
              t.keys.push_back(key);
              t.versions.push_back(version);
              t.rows.insert(t.rows.end(), row, row + t.header.row_floats);
              return absl::OkStatus();
            }));
    size.full_rows += whole.rows;
    size.full_bytes += whole.bytes;
    HERALD_ASSIGN_OR_RETURN(auto writer, checkpoint::ShardFileWriter::Create(path, header));
    for (Table& t : tables) {
      t.header.rows = t.keys.size();
      HERALD_RETURN_IF_ERROR(writer->BeginTable(t.header));
      for (size_t i = 0; i < t.keys.size(); ++i) {
        HERALD_RETURN_IF_ERROR(
            writer->AppendRow(t.keys[i], t.versions[i], t.rows.data() + i * t.header.row_floats));
      }
    }
    HERALD_ASSIGN_OR_RETURN(checkpoint::ShardFileInfo kept, writer->Finish());
    shard.set_rows(kept.rows);
    shard.set_bytes(kept.bytes);
    shard.set_checksum(absl::StrFormat("%08x", kept.crc32));
    size.rows += kept.rows;
    size.bytes += kept.bytes;
  }
  for (uint32_t t = 0; t < chain.tables.size(); ++t) {
    for (const auto& [key, row] : chain.tables[t]) size.deleted.push_back({t, key});
  }
  if (!size.deleted.empty() && !rows_expire) {
    return absl::InvalidArgumentError(
        absl::StrCat("since ", base_dir, ": it holds ", size.deleted.size(),
                     " rows this model does not: not an earlier export of this training"));
  }
  std::sort(size.deleted.begin(), size.deleted.end());
  HERALD_RETURN_IF_ERROR(checkpoint::WriteManifest(out_dir, *manifest).status());
  return size;
}

}  // namespace herald::scheduler
