#include "scheduler/rpc/export_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/text_proto.h"
#include "proto/checkpoint.pb.h"

namespace herald::scheduler {
namespace {

absl::Status ReadTextProtoFile(const std::string& path, google::protobuf::Message* out) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  std::stringstream text;
  text << in.rdbuf();
  if (absl::Status s = ParseTextProto(text.str(), out); !s.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", s.message()));
  }
  return absl::OkStatus();
}

// A path an export names, relative to its directory and inside it.
absl::Status CheckInside(const std::string& relative, const std::string& what) {
  if (relative.empty() || relative[0] == '/' || absl::StrContains(relative, "..")) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " \"", relative, "\" is not a path inside the export"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExportFiles> ListExportFiles(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("dir \"", dir, "\" is not an absolute path"));
  }
  ExportFiles out;
  const std::string model = dir + "/MODEL";
  if (!std::filesystem::exists(model)) {
    return absl::NotFoundError(absl::StrCat(dir, " is not an export (no MODEL)"));
  }
  if (absl::Status s = ReadTextProtoFile(model, &out.model); !s.ok()) return s;
  if (absl::Status s = CheckInside(out.model.tables_manifest(), "MODEL's tables_manifest");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckInside(out.model.dense_file(), "MODEL's dense_file"); !s.ok()) {
    return s;
  }
  proto::CheckpointManifest manifest;
  const std::string manifest_path = dir + "/" + out.model.tables_manifest();
  if (absl::Status s = ReadTextProtoFile(manifest_path, &manifest); !s.ok()) return s;
  const std::string manifest_dir =
      std::filesystem::path(out.model.tables_manifest()).parent_path().string();
  out.files.push_back(out.model.tables_manifest());
  for (const proto::CheckpointShard& shard : manifest.shards()) {
    if (absl::Status s = CheckInside(shard.file(), "the manifest's shard file"); !s.ok()) return s;
    out.files.push_back(manifest_dir.empty() ? shard.file() : manifest_dir + "/" + shard.file());
  }
  out.files.push_back(out.model.dense_file());
  out.files.push_back("MODEL");
  return out;
}

}  // namespace herald::scheduler
