#include "scheduler/jobs/resume_point.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "checkpoint/atomic_file.h"
#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "common/crc32.h"
#include "common/logging.h"
#include "common/status.h"
#include "google/protobuf/util/message_differencer.h"

namespace herald::scheduler {
namespace {

absl::Status Error(absl::StatusCode code, const std::string& message) {
  return absl::Status(code, absl::StrCat("checkpoint.resume_from: ", message));
}

// OK if every file `manifest` names is there with its checksum and it has a
// dense half; else the first problem, naming the file.
absl::Status Intact(const std::string& manifest_path, const proto::CheckpointManifest& manifest) {
  if (manifest.final()) {
    return absl::FailedPreconditionError(
        absl::StrCat(manifest_path,
                     " is a job's final checkpoint (no dense optimizer state): resume from a "
                     "periodic one (checkpoint.every_iterations)"));
  }
  if (manifest.dense_file().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(manifest_path,
                     " has no dense half (a job's final checkpoint): resume from a "
                     "periodic one (checkpoint.every_iterations)"));
  }
  return checkpoint::CheckManifestFiles(manifest_path, manifest);
}

// The newest complete, intact checkpoint under a job's checkpoint directory
// that has a dense half (a periodic one; a job's final checkpoint has none).
// A damaged one is skipped for the one before it.
absl::StatusOr<std::string> NewestResumable(const std::string& job_dir) {
  std::filesystem::path path(job_dir);
  if (!path.has_filename()) path = path.parent_path();  // a trailing '/'
  const std::string dir = path.parent_path().string(), job_id = path.filename().string();
  std::vector<uint64_t> iterations;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(job_dir, error)) {
    const std::string name = entry.path().filename().string();
    uint64_t it;
    if (absl::StartsWith(name, "iter-") && absl::SimpleAtoi(name.substr(5), &it)) {
      iterations.push_back(it);
    }
  }
  std::sort(iterations.rbegin(), iterations.rend());
  for (uint64_t it : iterations) {
    const std::string manifest_path = checkpoint::ManifestPath(dir, job_id, it);
    auto manifest = checkpoint::ReadManifest(manifest_path);
    if (!manifest.ok() || manifest->dense_file().empty() || manifest->final()) {
      continue;  // unfinished, or final
    }
    const absl::Status intact = Intact(manifest_path, *manifest);
    if (intact.ok()) return manifest_path;
    HLOG_WARN("checkpoint {} is damaged ({}); trying the one before it", manifest_path,
              std::string(intact.message()));
  }
  return absl::NotFoundError(
      absl::StrCat(job_dir, " holds no complete periodic checkpoint (with a dense half)"));
}

// The file's bytes; *ok false when it cannot be read.
std::string ReadWholeFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  *ok = static_cast<bool>(in);
  return bytes.str();
}

}  // namespace

absl::StatusOr<ResumePoint> ReadResumePoint(const proto::JobSpec& spec) {
  ResumePoint r;
  r.manifest = spec.checkpoint().resume_from();
  if (!absl::EndsWith(r.manifest, "/MANIFEST")) {  // a job's checkpoint directory
    auto newest = NewestResumable(r.manifest);
    if (!newest.ok()) return Error(newest.status().code(), std::string(newest.status().message()));
    r.manifest = *newest;
  }
  auto manifest = checkpoint::ReadManifest(r.manifest);
  if (!manifest.ok()) {
    return Error(manifest.status().code(), std::string(manifest.status().message()));
  }
  if (absl::Status intact = Intact(r.manifest, *manifest); !intact.ok()) {
    return Error(intact.code(), std::string(intact.message()));
  }
  if (manifest->spec().tables_size() != spec.tables_size()) {
    return Error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat(r.manifest, " has ", manifest->spec().tables_size(),
                              " tables, the job ", spec.tables_size()));
  }
  for (int t = 0; t < spec.tables_size(); ++t) {
    if (manifest->spec().tables(t).dim() != spec.tables(t).dim()) {
      return Error(
          absl::StatusCode::kInvalidArgument,
          absl::StrCat(r.manifest, ": table ", t, " has dim ", manifest->spec().tables(t).dim(),
                       ", the job's ", spec.tables(t).dim()));
    }
  }
  r.job_id = manifest->job_id();
  r.first_iteration = manifest->iteration() + 1;
  r.spec = manifest->spec();
  r.num_workers = manifest->num_workers();
  if (!manifest->planner_file().empty()) {
    r.planner_file = checkpoint::ManifestDir(r.manifest) + "/" + manifest->planner_file();
    r.planner_bytes = manifest->planner_bytes();
    r.planner_checksum = manifest->planner_checksum();
  }
  if (spec.iterations() > 0 && r.first_iteration >= spec.iterations()) {
    return Error(absl::StatusCode::kFailedPrecondition,
                 absl::StrCat(r.manifest, " is of iteration ", manifest->iteration(),
                              ": nothing is left of the job's ", spec.iterations(), " iterations"));
  }
  const std::string dense_path = checkpoint::ManifestDir(r.manifest) + "/" + manifest->dense_file();
  bool read = false;
  const std::string data = ReadWholeFile(dense_path, &read);
  const uint64_t floats = manifest->dense_floats() + manifest->dense_state_floats();
  if (!read || data.size() != floats * sizeof(float)) {
    return Error(absl::StatusCode::kDataLoss,
                 absl::StrCat(dense_path, ": ", data.size(), " bytes, the manifest says ",
                              floats * sizeof(float)));
  }
  if (Crc32Hex(Crc32(data.data(), data.size())) != manifest->dense_checksum()) {
    return Error(absl::StatusCode::kDataLoss,
                 absl::StrCat(dense_path, ": checksum does not match the manifest's"));
  }
  const float* f = reinterpret_cast<const float*>(data.data());
  r.dense.assign(f, f + manifest->dense_floats());
  r.dense_state.assign(f + manifest->dense_floats(), f + floats);
  return r;
}

absl::StatusOr<std::string> ReadPlannerState(const ResumePoint& point) {
  bool read = false;
  std::string data = ReadWholeFile(point.planner_file, &read);
  if (!read || data.size() != point.planner_bytes) {
    return absl::DataLossError(absl::StrCat(point.planner_file, ": ", read ? "" : "unreadable, ",
                                            data.size(), " bytes, the manifest says ",
                                            point.planner_bytes));
  }
  if (Crc32Hex(Crc32(data.data(), data.size())) != point.planner_checksum) {
    return absl::DataLossError(
        absl::StrCat(point.planner_file, ": checksum does not match the manifest's"));
  }
  return data;
}

absl::Status WriteBesideCheckpoint(const std::string& dir, const char* name,
                                   const std::string& bytes) {
  std::string sealed = bytes;
  const uint32_t crc = Crc32(bytes.data(), bytes.size());
  sealed.append(reinterpret_cast<const char*>(&crc), sizeof(crc));
  // Not fsynced: a file lost in a crash only costs the resume the work it
  // saves (reading the data).
  return checkpoint::WriteFileAtomically(dir + "/" + name, sealed,
                                         checkpoint::Durability::kPageCache);
}

absl::StatusOr<std::string> ReadBesideCheckpoint(const ResumePoint& point, const char* name) {
  const std::string path = checkpoint::ManifestDir(point.manifest) + "/" + name;
  if (!std::filesystem::exists(path)) return absl::NotFoundError(path + ": not there");
  bool read = false;
  std::string data = ReadWholeFile(path, &read);
  uint32_t crc = 0;
  if (read && data.size() >= sizeof(crc)) {
    std::memcpy(&crc, data.data() + data.size() - sizeof(crc), sizeof(crc));
    data.resize(data.size() - sizeof(crc));
    if (Crc32(data.data(), data.size()) == crc) return data;
  }
  return absl::DataLossError(absl::StrCat(path, ": ", read ? "checksum mismatch" : "unreadable"));
}

bool ContinuesSameTraining(const ResumePoint& point, const proto::JobSpec& spec,
                           uint32_t num_workers) {
  if (point.manifest.empty() || point.num_workers != num_workers) return false;
  proto::JobSpec a = point.spec, b = spec;
  // Where checkpoints come from and go, and how many stay, change no plan
  // (a launcher gives each run of a requeued allocation its own dir).
  for (proto::JobSpec* s : {&a, &b}) {
    s->mutable_checkpoint()->clear_resume_from();
    s->mutable_checkpoint()->clear_dir();
    s->mutable_checkpoint()->clear_keep_last();
  }
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

}  // namespace herald::scheduler
