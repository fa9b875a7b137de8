#include "scheduler/jobs/sizing_store.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/atomic_file.h"
#include "common/crc32.h"
#include "common/data/input_stream.h"
#include "common/logging.h"
#include "common/state_io.h"
#include "common/status.h"

namespace herald::scheduler {
namespace {

constexpr uint64_t kStoreMagic = 0x5453'5a49'5344'5248ULL;  // "HRDSIZST"

std::string PathFor(const std::string& dir, const std::string& key) {
  return absl::StrFormat("%s/sizing-%08x.bin", dir, Crc32(key.data(), key.size()));
}

// Removes the saved sizings beyond the kSizingsKept most recently saved
// or loaded (by modification time) from `dir`. Best effort: a file that
// cannot be removed now is removed by a later save.
void RemoveOldest(const std::string& dir) {
  std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> saved;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("sizing-", 0) != 0 || entry.path().extension() != ".bin") continue;
    const auto time = entry.last_write_time(ec);
    if (!ec) saved.emplace_back(time, entry.path());
  }
  if (saved.size() <= kSizingsKept) return;
  std::sort(saved.begin(), saved.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t i = kSizingsKept; i < saved.size(); ++i) {
    std::filesystem::remove(saved[i].second, ec);
    if (ec) HLOG_WARN("{}: not removed: {}", saved[i].second.string(), ec.message());
  }
}

}  // namespace

absl::StatusOr<std::string> SizingKey(const proto::JobSpec& spec, uint32_t num_workers) {
  // The fields the pass depends on, in a message of their own (no maps:
  // its bytes are a function of its fields).
  proto::JobSpec pass;
  *pass.mutable_data() = spec.data();
  pass.mutable_data()->clear_shuffle_buffer();  // the pass never shuffles
  pass.mutable_data()->clear_read_ahead_batches();
  *pass.mutable_tables() = spec.tables();
  pass.set_num_dense(spec.num_dense());
  pass.set_global_batch_size(spec.global_batch_size());
  pass.set_iterations(spec.iterations());  // the pass reads the batches trained, ≤ 1 epoch
  pass.set_epochs(spec.epochs());
  pass.set_seed(spec.seed());
  pass.mutable_scheduling()->set_cache_rows_per_worker(spec.scheduling().cache_rows_per_worker());
  pass.mutable_scheduling()->set_cache_fraction(spec.scheduling().cache_fraction());
  pass.mutable_scheduling()->set_warm_start(spec.scheduling().warm_start());
  pass.set_num_workers(num_workers);
  std::string key;
  if (!pass.SerializeToString(&key)) return absl::InternalError("sizing key: not serialisable");
  if (spec.data().format() == proto::DATA_FORMAT_GENERATED) return key;
  std::vector<std::string> paths(spec.data().paths().begin(), spec.data().paths().end());
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> files, data::ExpandInputPaths(paths));
  for (const std::string& file : files) {
    struct stat st;
    if (stat(file.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat(file, ": cannot stat"));
    }
    absl::StrAppend(&key, "\n", file, " ", st.st_dev, " ", st.st_ino, " ", st.st_size, " ",
                    st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, " ", st.st_ctim.tv_sec, ".",
                    st.st_ctim.tv_nsec);
  }
  return key;
}

absl::StatusOr<JobCacheSizing> LoadSizing(const std::string& dir, const std::string& key,
                                          size_t tables) {
  const std::string path = PathFor(dir, key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": none saved"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string data = bytes.str();
  StateReader reader(data, path);
  uint64_t magic = 0;
  std::vector<char> key_bytes, sizing_bytes;
  uint32_t crc = 0;
  if (reader.Pod("magic", &magic) && magic != kStoreMagic) {
    reader.Invalid("magic", "not a saved cache sizing");
  }
  reader.Vec("key", &key_bytes);
  reader.Vec("sizing", &sizing_bytes);
  if (reader.Pod("crc", &crc) && !reader.AtEnd()) reader.Invalid("crc", "bytes after it");
  HERALD_RETURN_IF_ERROR(reader.status());
  const std::string saved_key(key_bytes.begin(), key_bytes.end());
  const std::string sizing(sizing_bytes.begin(), sizing_bytes.end());
  if (Crc32Extend(Crc32(saved_key.data(), saved_key.size()), sizing.data(), sizing.size()) != crc) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch"));
  }
  // Another pass whose key has the same checksum: not this one's.
  if (saved_key != key) return absl::NotFoundError(absl::StrCat(path, ": another pass's"));
  HERALD_ASSIGN_OR_RETURN(JobCacheSizing loaded, LoadCacheSizing(sizing, tables));
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // used now: kept longer (best effort)
  return loaded;
}

absl::Status SaveSizing(const std::string& dir, const std::string& key,
                        const JobCacheSizing& sizing) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat(dir, ": ", ec.message()));
  const std::string bytes = SaveCacheSizing(sizing);
  StateWriter out;
  out.Pod(kStoreMagic);
  out.Vec(std::vector<char>(key.begin(), key.end()));
  out.Vec(std::vector<char>(bytes.begin(), bytes.end()));
  out.Pod(Crc32Extend(Crc32(key.data(), key.size()), bytes.data(), bytes.size()));
  // Not fsynced: a lost file only costs the next job a pass over its data.
  HERALD_RETURN_IF_ERROR(checkpoint::WriteFileAtomically(PathFor(dir, key), out.Take(),
                                                         checkpoint::Durability::kPageCache));
  RemoveOldest(dir);
  return absl::OkStatus();
}

}  // namespace herald::scheduler
