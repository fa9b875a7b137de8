#include "scheduler/service/resume_point.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/crc32.h"
#include "common/status.h"
#include "ps_server/checkpoint/manifest.h"

namespace herald::scheduler {
namespace {

absl::Status Error(absl::StatusCode code, const std::string& message) {
  return absl::Status(code, absl::StrCat("checkpoint.resume_from: ", message));
}

// The newest complete checkpoint under a job's checkpoint directory that has
// a dense half (a periodic one; a job's final checkpoint has none).
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
    const std::string manifest_path = ps::ManifestPath(dir, job_id, it);
    auto manifest = ps::ReadManifest(manifest_path);
    if (manifest.ok() && !manifest->dense_file().empty()) return manifest_path;
  }
  return absl::NotFoundError(
      absl::StrCat(job_dir, " holds no complete periodic checkpoint (with a dense half)"));
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
  auto manifest = ps::ReadManifest(r.manifest);
  if (!manifest.ok()) {
    return Error(manifest.status().code(), std::string(manifest.status().message()));
  }
  if (manifest->dense_file().empty()) {
    return Error(absl::StatusCode::kFailedPrecondition,
                 absl::StrCat(r.manifest,
                              " has no dense half (a job's final checkpoint): resume "
                              "from a periodic one (checkpoint.every_iterations)"));
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
  if (spec.iterations() > 0 && r.first_iteration >= spec.iterations()) {
    return Error(absl::StatusCode::kFailedPrecondition,
                 absl::StrCat(r.manifest, " is of iteration ", manifest->iteration(),
                              ": nothing is left of the job's ", spec.iterations(), " iterations"));
  }
  const std::string dense_path = ps::ManifestDir(r.manifest) + "/" + manifest->dense_file();
  std::ifstream in(dense_path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string data = bytes.str();
  const uint64_t floats = manifest->dense_floats() + manifest->dense_state_floats();
  if (!in || data.size() != floats * sizeof(float)) {
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

}  // namespace herald::scheduler
