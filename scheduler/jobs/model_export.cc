#include "scheduler/jobs/model_export.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "checkpoint/deleted_rows.h"
#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "common/crc32.h"
#include "common/model_consistency.h"
#include "common/status.h"
#include "google/protobuf/text_format.h"
#include "scheduler/jobs/export_increment.h"
#include "scheduler/jobs/job_checkpoint.h"

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

namespace {

// out_dir without trailing slashes. Errors: InvalidArgument for a relative
// path, AlreadyExists when it holds an export already.
absl::StatusOr<std::string> ExportDir(const std::string& out_dir_in) {
  std::string out_dir = out_dir_in;
  while (out_dir.size() > 1 && out_dir.back() == '/') out_dir.pop_back();
  if (!absl::StartsWith(out_dir, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("out_dir: \"", out_dir_in, "\" is not an absolute path"));
  }
  const std::string model_path = absl::StrCat(out_dir, "/", kModelExportFile);
  if (Exists(model_path)) {
    return absl::AlreadyExistsError(absl::StrCat(model_path, " exists: export to a new directory"));
  }
  HERALD_RETURN_IF_ERROR(checkpoint::MakeDirs(out_dir));
  return out_dir;
}

// A table of `spec` has row expiry: an increment may delete rows.
bool RowsExpire(const proto::JobSpec& spec) {
  for (const proto::TableSpec& t : spec.tables()) {
    if (t.expiry().after_iterations() > 0) return true;
  }
  return false;
}

// Whole: `manifest`'s rows and bytes; else `since`'s increment of them
// (rewritten in place).
absl::StatusOr<IncrementSize> TablesSince(const std::string& out_dir,
                                          const std::string& manifest_path,
                                          proto::CheckpointManifest* manifest,
                                          const std::string& since, bool rows_expire) {
  if (!since.empty()) {
    return KeepChangedRows(out_dir, manifest_path, manifest, since, rows_expire);
  }
  IncrementSize size;
  for (const proto::CheckpointShard& shard : manifest->shards()) {
    size.rows += shard.rows();
    size.bytes += shard.bytes();
  }
  size.full_rows = size.rows;
  size.full_bytes = size.bytes;
  return size;
}

// Writes dense.f32 and then MODEL (last) into out_dir, whose tables are
// the checkpoint manifest at `manifest_path` under it (`size` of them; an
// increment of `since` when set).
absl::StatusOr<proto::ExportJobResponse> WriteModelFiles(const TrainedModel& model,
                                                         const std::string& out_dir,
                                                         const std::string& manifest_path,
                                                         const std::string& since,
                                                         const IncrementSize& size) {
  const uint64_t rows = size.rows;
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
  exported.set_base(since);
  exported.set_full_rows(size.full_rows);
  exported.set_model_consistency(ModelConsistency(model.spec.scheduling()));
  if (!size.deleted.empty()) {
    const std::string deleted = checkpoint::EncodeDeletedRows(size.deleted);
    HERALD_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(out_dir, "/", kDeletedExportFile),
                                               deleted.data(), deleted.size()));
    exported.set_deleted_file(kDeletedExportFile);
    exported.set_deleted_rows(size.deleted.size());
    exported.set_deleted_crc32(Crc32Hex(Crc32(deleted.data(), deleted.size())));
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(exported, &text);
  const std::string model_path = absl::StrCat(out_dir, "/", kModelExportFile);
  HERALD_RETURN_IF_ERROR(WriteFileAtomically(model_path, text.data(), text.size()));
  proto::ExportJobResponse response;
  response.set_manifest_path(model_path);
  response.set_rows(rows);
  response.set_dense_floats(model.dense.size());
  response.set_full_rows(size.full_rows);
  response.set_bytes(size.bytes + dense_bytes);
  response.set_full_bytes(size.full_bytes + dense_bytes);
  return response;
}

}  // namespace

absl::StatusOr<proto::ExportJobResponse> WriteModelExport(const TrainedModel& model,
                                                          ps::PsClient* ps,
                                                          const std::string& out_dir_in,
                                                          const std::string& since) {
  if (model.iterations == 0) {
    return absl::InvalidArgumentError(absl::StrCat("job ", model.job_id, " trained no iteration"));
  }
  if (model.dense.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("job ", model.job_id, ": no dense parameters were uploaded"));
  }
  HERALD_ASSIGN_OR_RETURN(const std::string out_dir, ExportDir(out_dir_in));
  checkpoint::ManifestParts parts;
  parts.job_id = model.job_id;
  parts.iteration = model.iterations - 1;
  parts.spec = model.spec;
  parts.num_workers = model.num_workers;
  HERALD_ASSIGN_OR_RETURN(std::string manifest_path, CheckpointJob(*ps, parts, out_dir));
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest manifest,
                          checkpoint::ReadManifest(manifest_path));
  HERALD_ASSIGN_OR_RETURN(IncrementSize size, TablesSince(out_dir, manifest_path, &manifest, since,
                                                          RowsExpire(model.spec)));
  return WriteModelFiles(model, out_dir, manifest_path, since, size);
}

absl::StatusOr<proto::ExportJobResponse> ExportFinalCheckpoint(const std::string& final_manifest,
                                                               const std::string& out_dir_in,
                                                               const std::string& since) {
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest manifest,
                          checkpoint::ReadManifest(final_manifest));
  if (!manifest.final()) {
    return absl::FailedPreconditionError(
        absl::StrCat(final_manifest, " is not a job's final checkpoint"));
  }
  return ExportCheckpoint(final_manifest, out_dir_in, since);
}

absl::StatusOr<proto::ExportJobResponse> ExportCheckpoint(const std::string& checkpoint_manifest,
                                                          const std::string& out_dir_in,
                                                          const std::string& since) {
  const std::string& final_manifest = checkpoint_manifest;
  HERALD_ASSIGN_OR_RETURN(proto::CheckpointManifest manifest,
                          checkpoint::ReadManifest(final_manifest));
  if (manifest.dense_file().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(final_manifest, " has no dense parameters (not a job's checkpoint)"));
  }
  // Every file checked against the manifest before anything is written.
  HERALD_RETURN_IF_ERROR(checkpoint::CheckManifestFiles(final_manifest, manifest));
  const std::string from = checkpoint::ManifestDir(final_manifest);
  TrainedModel model;
  model.job_id = manifest.job_id();
  model.spec = manifest.spec();
  model.iterations = manifest.iteration() + 1;
  model.dense.resize(manifest.dense_floats());
  {
    std::ifstream in(from + "/" + manifest.dense_file(), std::ios::binary);
    in.read(reinterpret_cast<char*>(model.dense.data()),
            static_cast<std::streamsize>(model.dense.size() * sizeof(float)));
    if (!in || model.dense.empty()) {
      return absl::DataLossError(absl::StrCat(from, "/", manifest.dense_file(), ": not ",
                                              manifest.dense_floats(), " floats"));
    }
  }
  HERALD_ASSIGN_OR_RETURN(const std::string out_dir, ExportDir(out_dir_in));
  const std::string to =
      checkpoint::CheckpointIterationDir(out_dir, model.job_id, manifest.iteration());
  HERALD_RETURN_IF_ERROR(checkpoint::MakeDirs(to));
  for (const proto::CheckpointShard& shard : manifest.shards()) {
    std::error_code error;
    std::filesystem::copy_file(from + "/" + shard.file(), to + "/" + shard.file(),
                               std::filesystem::copy_options::overwrite_existing, error);
    if (error) {
      return absl::InternalError(
          absl::StrCat("cannot copy ", from, "/", shard.file(), " to ", to, ": ", error.message()));
    }
  }
  // The export's tables: the shards alone, as a live export writes them.
  proto::CheckpointManifest tables = manifest;
  tables.clear_dense_file();
  tables.clear_dense_floats();
  tables.clear_dense_state_floats();
  tables.clear_dense_checksum();
  tables.clear_final();
  tables.clear_planner_file();
  tables.clear_planner_bytes();
  tables.clear_planner_checksum();
  HERALD_ASSIGN_OR_RETURN(std::string manifest_path, checkpoint::WriteManifest(out_dir, tables));
  HERALD_ASSIGN_OR_RETURN(IncrementSize size, TablesSince(out_dir, manifest_path, &tables, since,
                                                          RowsExpire(model.spec)));
  return WriteModelFiles(model, out_dir, manifest_path, since, size);
}

}  // namespace herald::scheduler
