#include "scheduler/jobs/job_checkpointer.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "checkpoint/atomic_file.h"
#include "checkpoint/manifest.h"
#include "common/crc32.h"
#include "common/logging.h"
#include "common/status.h"
#include "scheduler/jobs/job_checkpoint.h"
#include "scheduler/jobs/model_export.h"
#include "scheduler/jobs/resume_point.h"

namespace herald::scheduler {
namespace {

std::string_view BytesOf(const std::vector<float>& floats) {
  return {reinterpret_cast<const char*>(floats.data()), floats.size() * sizeof(float)};
}

}  // namespace

JobCheckpointer::JobCheckpointer(std::string job_id, const proto::JobSpec& spec,
                                 uint32_t num_workers)
    : job_id_(std::move(job_id)), spec_(spec), num_workers_(num_workers) {}

void JobCheckpointer::AcceptDense(uint64_t iteration, std::vector<float> floats,
                                  uint64_t state_floats) {
  absl::MutexLock lock(&mu_);
  dense_[iteration] = {std::move(floats), state_floats};
}

bool JobCheckpointer::RefusedByStorage(const absl::Status& status) {
  return absl::IsResourceExhausted(status) || absl::IsPermissionDenied(status);
}

void JobCheckpointer::RemovePartial(uint64_t iteration) const {
  std::error_code ignored;
  std::filesystem::remove_all(
      checkpoint::CheckpointIterationDir(spec_.checkpoint().dir(), job_id_, iteration), ignored);
}

void JobCheckpointer::Prune() const {
  absl::StatusOr<int> pruned = checkpoint::PruneCheckpoints(spec_.checkpoint().dir(), job_id_,
                                                            spec_.checkpoint().keep_last());
  if (!pruned.ok()) HLOG_WARN("job {}: {}", job_id_, std::string(pruned.status().message()));
}

void JobCheckpointer::KeepCacheSizing(std::string bytes) {
  absl::MutexLock lock(&mu_);
  cache_sizing_ = std::move(bytes);
}

absl::StatusOr<WrittenCheckpoint> JobCheckpointer::WritePeriodic(
    ps::PsClient& ps, uint64_t iteration, const std::string& planner_state,
    const absl::StatusOr<std::string>& data_cursor) {
  Dense dense;
  {
    absl::MutexLock lock(&mu_);
    auto it = dense_.find(iteration);
    if (it == dense_.end()) {
      return absl::InternalError(absl::StrCat("checkpoint of iteration ", iteration,
                                              ": worker 0 uploaded no dense state"));
    }
    dense = std::move(it->second);
    dense_.erase(dense_.begin(), std::next(it));
  }
  const std::string iteration_dir =
      checkpoint::CheckpointIterationDir(spec_.checkpoint().dir(), job_id_, iteration);
  HERALD_RETURN_IF_ERROR(checkpoint::MakeDirs(iteration_dir));
  checkpoint::DenseCheckpointFile dense_file;
  dense_file.file = "dense.bin";
  dense_file.floats = dense.floats.size() - dense.state_floats;
  dense_file.state_floats = dense.state_floats;
  const std::string_view dense_bytes = BytesOf(dense.floats);
  dense_file.checksum = Crc32Hex(Crc32(dense_bytes.data(), dense_bytes.size()));
  checkpoint::PlannerCheckpointFile planner_file;
  planner_file.file = "planner.bin";
  planner_file.bytes = planner_state.size();
  planner_file.checksum = Crc32Hex(Crc32(planner_state.data(), planner_state.size()));
  absl::Status written =
      checkpoint::WriteFileAtomically(iteration_dir + "/" + dense_file.file, dense_bytes);
  if (written.ok()) {
    written =
        checkpoint::WriteFileAtomically(iteration_dir + "/" + planner_file.file, planner_state);
  }
  absl::StatusOr<std::string> manifest = absl::UnknownError("not written");
  if (written.ok()) {
    checkpoint::ManifestParts parts{job_id_, iteration, spec_, num_workers_};
    parts.dense = &dense_file;
    parts.planner = &planner_file;
    manifest = CheckpointJob(ps, parts, spec_.checkpoint().dir());
  } else {
    manifest = written;
  }
  if (!manifest.ok()) {
    return absl::Status(
        manifest.status().code(),
        absl::StrCat("checkpoint of iteration ", iteration, ": ", manifest.status().message()));
  }
  WrittenCheckpoint result;
  result.manifest = *manifest;
  result.bytes = dense_bytes.size() + planner_state.size();
  // The data cursor, after the manifest: the shards' files need not wait
  // for it, and a checkpoint without it (a crash in between, a refused
  // write) is still whole: a resume from it reads its way to its place.
  if (data_cursor.ok()) {
    const absl::Time cursor_start = absl::Now();
    if (absl::Status s = WriteBesideCheckpoint(iteration_dir, kDataCursorFile, *data_cursor);
        !s.ok()) {
      HLOG_WARN("job {}: the data cursor of iteration {} was not written: {}", job_id_, iteration,
                std::string(s.message()));
    } else {
      result.bytes += data_cursor->size();
      HLOG_INFO("job {}: data cursor after iteration {}: {} bytes written in {:.0f} ms", job_id_,
                iteration, data_cursor->size(),
                absl::ToDoubleMilliseconds(absl::Now() - cursor_start));
    }
  }
  // The cache sizing likewise: without it a resume reads its data again.
  std::string sizing;
  {
    absl::MutexLock lock(&mu_);
    sizing = cache_sizing_;
  }
  if (!sizing.empty()) {
    if (absl::Status s = WriteBesideCheckpoint(iteration_dir, kCacheSizingFile, sizing); !s.ok()) {
      HLOG_WARN("job {}: the cache sizing of iteration {} was not written: {}", job_id_, iteration,
                std::string(s.message()));
    } else {
      result.bytes += sizing.size();
    }
  }
  if (absl::StatusOr<proto::CheckpointManifest> m = checkpoint::ReadManifest(*manifest); m.ok()) {
    for (const proto::CheckpointShard& shard : m->shards()) {
      result.bytes += shard.bytes();
      result.write_ms = std::max(result.write_ms, shard.write_ms());
    }
  }
  ExportIfDue(*manifest, iteration, /*final=*/false);
  Prune();
  return result;
}

void JobCheckpointer::ExportIfDue(const std::string& manifest, uint64_t iteration, bool final) {
  const uint64_t every = spec_.exports().every_iterations();
  const double minutes = spec_.exports().every_minutes();
  if (every == 0 && minutes <= 0) return;
  const bool due = final || (every > 0 && (iteration + 1) % every == 0) ||
                   (minutes > 0 && absl::Now() - last_export_time_ >= absl::Minutes(minutes));
  if (!due) return;
  last_export_time_ = absl::Now();
  const std::string out =
      checkpoint::CheckpointIterationDir(spec_.exports().dir(), job_id_, iteration);
  const absl::Time start = absl::Now();
  absl::StatusOr<proto::ExportJobResponse> r = ExportCheckpoint(manifest, out, last_export_);
  if (!r.ok()) {
    HLOG_ERROR("job {}: export after iteration {} into {} failed (the next one is whole): {}",
               job_id_, iteration, out, std::string(r.status().message()));
    last_export_.clear();
    return;
  }
  HLOG_INFO(
      "job {}: export after iteration {}: {} ({} of {} rows, {} bytes; whole: {} bytes) in {:.0f} "
      "ms",
      job_id_, iteration, last_export_.empty() ? out : absl::StrCat(out, " since ", last_export_),
      r->rows(), r->full_rows(), r->bytes(), r->full_bytes(),
      absl::ToDoubleMilliseconds(absl::Now() - start));
  last_export_ = out;
  // LATEST names the newest export, replaced whole (a reader sees the old
  // name or the new one) once the export is complete.
  const std::filesystem::path export_dir(out);
  const std::string latest = (export_dir.parent_path() / kLatestExportFile).string();
  if (absl::Status s = checkpoint::WriteFileAtomically(
          latest, absl::StrCat(export_dir.filename().string(), "\n"));
      !s.ok()) {
    HLOG_ERROR("job {}: {} not updated to {}: {}", job_id_, latest, out, std::string(s.message()));
  }
}

absl::StatusOr<std::string> JobCheckpointer::WriteFinal(ps::PsClient& ps, uint64_t iteration,
                                                        const std::vector<float>& dense) {
  const std::string iteration_dir =
      checkpoint::CheckpointIterationDir(spec_.checkpoint().dir(), job_id_, iteration);
  HERALD_RETURN_IF_ERROR(checkpoint::MakeDirs(iteration_dir));
  checkpoint::DenseCheckpointFile dense_file;
  dense_file.file = "dense.bin";
  dense_file.floats = dense.size();
  dense_file.final = true;
  const std::string_view bytes = BytesOf(dense);
  dense_file.checksum = Crc32Hex(Crc32(bytes.data(), bytes.size()));
  HERALD_RETURN_IF_ERROR(
      checkpoint::WriteFileAtomically(iteration_dir + "/" + dense_file.file, bytes));
  checkpoint::ManifestParts parts{job_id_, iteration, spec_, num_workers_};
  parts.dense = &dense_file;
  HERALD_ASSIGN_OR_RETURN(std::string manifest, CheckpointJob(ps, parts, spec_.checkpoint().dir()));
  // A pruning failure leaves an older checkpoint behind: nothing lost.
  checkpoint::PruneCheckpoints(spec_.checkpoint().dir(), job_id_, spec_.checkpoint().keep_last())
      .status()
      .IgnoreError();
  ExportIfDue(manifest, iteration, /*final=*/true);
  return manifest;
}

}  // namespace herald::scheduler
