#include "checkpoint/manifest.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/atomic_file.h"
#include "checkpoint/shard_file.h"
#include "google/protobuf/text_format.h"

namespace herald::checkpoint {

std::string CheckpointIterationDir(const std::string& dir, const std::string& job_id,
                                   uint64_t iteration) {
  return absl::StrFormat("%s/%s/iter-%012d", dir, job_id, iteration);
}

std::string ShardFileName(uint32_t shard, uint32_t num_shards) {
  return absl::StrFormat("shard-%05d-of-%05d.hsf", shard, num_shards);
}

std::string ManifestPath(const std::string& dir, const std::string& job_id, uint64_t iteration) {
  return CheckpointIterationDir(dir, job_id, iteration) + "/MANIFEST";
}

std::string ManifestDir(const std::string& manifest_path) {
  const size_t slash = manifest_path.rfind('/');
  return slash == std::string::npos ? "." : manifest_path.substr(0, slash);
}

absl::Status MakeDirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return FileError("cannot create directory", prefix, errno);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> WriteManifest(const std::string& dir,
                                          const proto::CheckpointManifest& manifest) {
  const std::string path = ManifestPath(dir, manifest.job_id(), manifest.iteration());
  absl::Status s = MakeDirs(ManifestDir(path));
  if (!s.ok()) return s;
  std::string text;
  google::protobuf::TextFormat::PrintToString(manifest, &text);
  s = WriteFileAtomically(path, text);
  if (!s.ok()) return s;
  return path;
}

absl::StatusOr<proto::CheckpointManifest> ReadManifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open manifest ", path));
  std::stringstream text;
  text << in.rdbuf();
  proto::CheckpointManifest m;
  if (!google::protobuf::TextFormat::ParseFromString(text.str(), &m)) {
    return absl::DataLossError(absl::StrCat(path, ": not a checkpoint manifest (text proto)"));
  }
  if (m.num_shards() == 0 || m.shards_size() != static_cast<int>(m.num_shards())) {
    return absl::DataLossError(absl::StrCat(path, ": lists ", m.shards_size(), " shard files for ",
                                            m.num_shards(), " shards"));
  }
  for (int i = 0; i < m.shards_size(); ++i) {
    if (m.shards(i).shard() != static_cast<uint32_t>(i) || m.shards(i).file().empty() ||
        absl::StrContains(m.shards(i).file(), "/")) {
      return absl::DataLossError(
          absl::StrCat(path, ": shards[", i, "] is not shard ", i, " with a plain file name"));
    }
  }
  return m;
}

absl::StatusOr<std::string> FindLatestManifest(const std::string& dir, const std::string& job_id) {
  const std::string job_dir = absl::StrCat(dir, "/", job_id);
  DIR* d = ::opendir(job_dir.c_str());
  if (d == nullptr) {
    return absl::NotFoundError(absl::StrCat("no checkpoints of job ", job_id, " under ", dir));
  }
  bool found = false;
  uint64_t best = 0;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    uint64_t it;
    if (!absl::StartsWith(name, "iter-") || !absl::SimpleAtoi(name.substr(5), &it)) continue;
    struct stat st;
    if (::stat(ManifestPath(dir, job_id, it).c_str(), &st) != 0) continue;  // unfinished
    if (!found || it > best) best = it;
    found = true;
  }
  ::closedir(d);
  if (!found) {
    return absl::NotFoundError(
        absl::StrCat("no complete checkpoint of job ", job_id, " under ", dir));
  }
  return ManifestPath(dir, job_id, best);
}

absl::StatusOr<int> PruneCheckpoints(const std::string& dir, const std::string& job_id,
                                     uint32_t keep_last) {
  if (keep_last == 0) return 0;
  const std::filesystem::path job_dir = std::filesystem::path(dir) / job_id;
  std::error_code error;
  std::vector<std::pair<uint64_t, bool>> iterations;  // (iteration, complete)
  for (const auto& entry : std::filesystem::directory_iterator(job_dir, error)) {
    const std::string name = entry.path().filename().string();
    uint64_t it;
    if (!absl::StartsWith(name, "iter-") || !absl::SimpleAtoi(name.substr(5), &it)) continue;
    iterations.emplace_back(it, std::filesystem::exists(ManifestPath(dir, job_id, it)));
  }
  std::sort(iterations.rbegin(), iterations.rend());  // newest first
  uint32_t complete = 0;
  int removed = 0;
  for (const auto& [it, is_complete] : iterations) {
    // Unfinished ones newer than every complete one may still be written.
    const bool keep = is_complete ? ++complete <= keep_last : complete == 0;
    if (keep) continue;
    const std::string path = CheckpointIterationDir(dir, job_id, it);
    std::filesystem::remove_all(path, error);
    if (error) {
      return absl::InternalError(absl::StrCat("cannot remove ", path, ": ", error.message()));
    }
    ++removed;
  }
  return removed;
}

absl::Status CheckManifestFiles(const std::string& manifest_path,
                                const proto::CheckpointManifest& manifest) {
  const std::string dir = ManifestDir(manifest_path);
  auto check = [&](const std::string& file, const std::string& want) -> absl::Status {
    if (file.empty()) return absl::OkStatus();
    absl::StatusOr<std::string> crc = FileCrc32Hex(dir + "/" + file);
    if (!crc.ok()) return absl::DataLossError(absl::StrCat(dir, "/", file, ": missing"));
    if (*crc != want) {
      return absl::DataLossError(
          absl::StrCat(dir, "/", file, ": checksum ", *crc, ", the manifest says ", want));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = check(manifest.dense_file(), manifest.dense_checksum()); !s.ok()) return s;
  if (absl::Status s = check(manifest.planner_file(), manifest.planner_checksum()); !s.ok()) {
    return s;
  }
  for (const proto::CheckpointShard& shard : manifest.shards()) {
    if (absl::Status s = check(shard.file(), shard.checksum()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

proto::CheckpointManifest AssembleManifest(const ManifestParts& parts,
                                           std::vector<proto::CheckpointShard> shards) {
  proto::CheckpointManifest manifest;
  manifest.set_job_id(parts.job_id);
  manifest.set_iteration(parts.iteration);
  manifest.set_num_shards(static_cast<uint32_t>(shards.size()));
  manifest.set_num_workers(parts.num_workers);
  *manifest.mutable_spec() = parts.spec;
  for (proto::CheckpointShard& shard : shards) *manifest.add_shards() = std::move(shard);
  if (parts.dense != nullptr) {
    manifest.set_dense_file(parts.dense->file);
    manifest.set_dense_floats(parts.dense->floats);
    manifest.set_dense_state_floats(parts.dense->state_floats);
    manifest.set_dense_checksum(parts.dense->checksum);
    manifest.set_final(parts.dense->final);
  }
  if (parts.planner != nullptr) {
    manifest.set_planner_file(parts.planner->file);
    manifest.set_planner_bytes(parts.planner->bytes);
    manifest.set_planner_checksum(parts.planner->checksum);
  }
  return manifest;
}

}  // namespace herald::checkpoint
