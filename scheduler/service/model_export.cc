#include "scheduler/service/model_export.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/crc32.h"
#include "common/status.h"
#include "google/protobuf/text_format.h"
#include "ps_server/checkpoint/manifest.h"

namespace herald::scheduler {
namespace {

// Writes `bytes` to `path` through `path`.tmp and a rename.
absl::Status WriteFileAtomically(const std::string& path, const void* bytes, size_t n) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", temp));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", temp, " to ", path));
  }
  return absl::OkStatus();
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace

absl::StatusOr<proto::ExportJobResponse> WriteModelExport(const TrainedModel& model,
                                                          ps::PsClient* ps,
                                                          const std::string& out_dir_in) {
  std::string out_dir = out_dir_in;
  while (out_dir.size() > 1 && out_dir.back() == '/') out_dir.pop_back();
  if (!absl::StartsWith(out_dir, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("out_dir: \"", out_dir_in, "\" is not an absolute path"));
  }
  if (model.iterations == 0) {
    return absl::InvalidArgumentError(absl::StrCat("job ", model.job_id, " trained no iteration"));
  }
  if (model.dense.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", model.job_id, ": no dense parameters were uploaded"));
  }
  const std::string model_path = absl::StrCat(out_dir, "/", kModelExportFile);
  if (Exists(model_path)) {
    return absl::AlreadyExistsError(absl::StrCat(model_path, " exists: export to a new directory"));
  }
  HERALD_RETURN_IF_ERROR(ps::MakeDirs(out_dir));

  HERALD_ASSIGN_OR_RETURN(std::string manifest_path,
                          ps->Checkpoint(model.job_id, model.iterations - 1, out_dir));
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest manifest, ps::ReadManifest(manifest_path));
  uint64_t rows = 0;
  for (const proto::CheckpointShard& shard : manifest.shards()) rows += shard.rows();

  const size_t dense_bytes = model.dense.size() * sizeof(float);
  HERALD_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(out_dir, "/", kDenseExportFile),
                                             model.dense.data(), dense_bytes));

  proto::ModelExport exported;
  exported.set_format_version(1);
  exported.set_job_id(model.job_id);
  exported.set_iterations(model.iterations);
  *exported.mutable_spec() = model.spec;
  exported.set_tables_manifest(manifest_path.substr(out_dir.size() + 1));
  exported.set_dense_file(kDenseExportFile);
  exported.set_dense_floats(model.dense.size());
  exported.set_dense_crc32(Crc32Hex(Crc32(model.dense.data(), dense_bytes)));
  exported.set_exported_unix_ms(absl::ToUnixMillis(absl::Now()));
  exported.set_rows(rows);
  std::string text;
  google::protobuf::TextFormat::PrintToString(exported, &text);
  HERALD_RETURN_IF_ERROR(WriteFileAtomically(model_path, text.data(), text.size()));

  proto::ExportJobResponse response;
  response.set_manifest_path(model_path);
  response.set_rows(rows);
  response.set_dense_floats(model.dense.size());
  return response;
}

}  // namespace herald::scheduler
