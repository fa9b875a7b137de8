#include "checkpoint/shard_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/atomic_file.h"
#include "zlib.h"

namespace herald::checkpoint {
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  return FileError(what, path, errno);
}

// Sequential reader that keeps the running CRC of everything read.
class CrcReader {
 public:
  CrcReader(std::FILE* f, std::string path)
      : f_(f), path_(std::move(path)), crc_(crc32(0, nullptr, 0)) {}
  absl::Status Read(void* out, size_t n, const char* what) {
    if (std::fread(out, 1, n, f_) != n) {
      return absl::DataLossError(
          absl::StrCat(path_, ": truncated at byte ", offset_, " while reading ", what));
    }
    crc_ = crc32(crc_, static_cast<const Bytef*>(out), static_cast<uInt>(n));
    offset_ += n;
    return absl::OkStatus();
  }
  template <typename T>
  absl::Status ReadPod(T* out, const char* what) {
    return Read(out, sizeof(T), what);
  }
  uint32_t crc() const { return crc_; }
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  std::FILE* f_;
  std::string path_;
  uint32_t crc_;
  uint64_t offset_ = 0;
};

}  // namespace

ShardFileWriter::ShardFileWriter(std::string path, std::string temp_path, std::FILE* file)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      file_(file),
      crc_(crc32(0, nullptr, 0)) {
  buffer_.reserve(kBufferBytes);
}

ShardFileWriter::~ShardFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
  if (!finished_) std::remove(temp_path_.c_str());
}

absl::StatusOr<std::unique_ptr<ShardFileWriter>> ShardFileWriter::Create(
    const std::string& path, const ShardFileHeader& header) {
  const std::string temp = absl::StrCat(path, ".tmp-", ::getpid());
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (f == nullptr) return Errno("cannot create", temp);
  std::unique_ptr<ShardFileWriter> w(new ShardFileWriter(path, temp, f));
  const uint32_t job_len = static_cast<uint32_t>(header.job_id.size());
  absl::Status s = w->Write(kShardFileMagic, 8);
  if (s.ok()) s = w->Write(&kShardFileVersion, 4);
  if (s.ok()) s = w->Write(&header.shard, 4);
  if (s.ok()) s = w->Write(&header.num_shards, 4);
  if (s.ok()) s = w->Write(&header.iteration, 8);
  if (s.ok()) s = w->Write(&job_len, 4);
  if (s.ok()) s = w->Write(header.job_id.data(), job_len);
  if (s.ok()) s = w->Write(&header.num_tables, 4);
  if (!s.ok()) return s;
  return w;
}

absl::Status ShardFileWriter::Write(const void* data, size_t n) {
  buffer_.append(static_cast<const char*>(data), n);
  bytes_ += n;
  return buffer_.size() >= kBufferBytes ? Drain() : absl::OkStatus();
}

absl::Status ShardFileWriter::Drain() {
  if (buffer_.empty()) return absl::OkStatus();
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    return Errno("cannot write", temp_path_);
  }
  crc_ = crc32(crc_, reinterpret_cast<const Bytef*>(buffer_.data()),
               static_cast<uInt>(buffer_.size()));
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status ShardFileWriter::BeginTable(const ShardTableHeader& t) {
  if (table_rows_left_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("previous table still expects ", table_rows_left_, " rows"));
  }
  table_rows_left_ = t.rows;
  row_floats_ = t.row_floats;
  uint32_t fields[4] = {t.table_id, t.dim, t.row_floats, t.optimizer_kind};
  absl::Status s = Write(fields, sizeof(fields));
  if (!s.ok()) return s;
  return Write(&t.rows, 8);
}

absl::Status ShardFileWriter::AppendRow(Key key, uint64_t version, const float* row) {
  if (table_rows_left_ == 0) return absl::FailedPreconditionError("row outside a table");
  --table_rows_left_;
  ++rows_;
  absl::Status s = Write(&key, 8);
  if (s.ok()) s = Write(&version, 8);
  if (s.ok()) s = Write(row, row_floats_ * sizeof(float));
  return s;
}

absl::StatusOr<ShardFileInfo> ShardFileWriter::Finish() {
  if (table_rows_left_ != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("last table still expects ", table_rows_left_, " rows"));
  }
  absl::Status s = Write(kShardFileEndMagic, 8);
  if (s.ok()) s = Write(&rows_, 8);
  if (s.ok()) s = Drain();
  if (!s.ok()) return s;
  const uint32_t body_crc = crc_;
  s = Write(&body_crc, 4);
  if (s.ok()) s = Drain();
  if (!s.ok()) return s;
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    return Errno("cannot flush", temp_path_);
  }
  std::fclose(file_);
  file_ = nullptr;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Errno("cannot rename to " + path_ + ":", temp_path_);
  }
  finished_ = true;
  s = FsyncDirOf(path_);
  if (!s.ok()) return s;
  ShardFileInfo info;
  info.path = path_;
  info.bytes = bytes_;
  info.crc32 = crc_;
  info.rows = rows_;
  return info;
}

absl::StatusOr<ShardFileInfo> ReadShardFile(
    const std::string& path, ShardFileHeader* header,
    const std::function<absl::Status(const ShardTableHeader&)>& on_table,
    const std::function<absl::Status(Key, uint64_t, const float*)>& on_row) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot open checkpoint file ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  CrcReader r(f, path);
  char magic[8];
  absl::Status s = r.Read(magic, 8, "magic");
  if (!s.ok()) return s;
  if (std::memcmp(magic, kShardFileMagic, 8) != 0) {
    return absl::DataLossError(absl::StrCat(path, ": not a Herald shard checkpoint (bad magic)"));
  }
  uint32_t version = 0, job_len = 0;
  if (!(s = r.ReadPod(&version, "format version")).ok()) return s;
  if (version != kShardFileVersion) {
    return absl::DataLossError(absl::StrCat(path, ": format version ", version,
                                            " (this build reads ", kShardFileVersion, ")"));
  }
  if (!(s = r.ReadPod(&header->shard, "shard")).ok()) return s;
  if (!(s = r.ReadPod(&header->num_shards, "num_shards")).ok()) return s;
  if (!(s = r.ReadPod(&header->iteration, "iteration")).ok()) return s;
  if (!(s = r.ReadPod(&job_len, "job id length")).ok()) return s;
  if (job_len > 4096) return absl::DataLossError(absl::StrCat(path, ": job id length ", job_len));
  header->job_id.resize(job_len);
  if (!(s = r.Read(header->job_id.data(), job_len, "job id")).ok()) return s;
  if (!(s = r.ReadPod(&header->num_tables, "table count")).ok()) return s;
  uint64_t rows = 0;
  std::vector<float> row;
  for (uint32_t t = 0; t < header->num_tables; ++t) {
    uint32_t fields[4];
    ShardTableHeader th;
    if (!(s = r.Read(fields, sizeof(fields), "table header")).ok()) return s;
    if (!(s = r.ReadPod(&th.rows, "table row count")).ok()) return s;
    th.table_id = fields[0];
    th.dim = fields[1];
    th.row_floats = fields[2];
    th.optimizer_kind = fields[3];
    if (th.row_floats == 0 || th.row_floats > (1u << 16) || th.dim > th.row_floats) {
      return absl::DataLossError(absl::StrCat(path, ": table ", th.table_id, " has dim ", th.dim,
                                              " and ", th.row_floats, " floats per row"));
    }
    if (!(s = on_table(th)).ok()) return s;
    row.resize(th.row_floats);
    for (uint64_t i = 0; i < th.rows; ++i) {
      Key key;
      uint64_t v;
      if (!(s = r.ReadPod(&key, "row key")).ok()) return s;
      if (!(s = r.ReadPod(&v, "row version")).ok()) return s;
      if (!(s = r.Read(row.data(), row.size() * sizeof(float), "row values")).ok()) return s;
      if (!(s = on_row(key, v, row.data())).ok()) return s;
    }
    rows += th.rows;
  }
  char end[8];
  uint64_t total = 0;
  if (!(s = r.Read(end, 8, "end marker")).ok()) return s;
  if (std::memcmp(end, kShardFileEndMagic, 8) != 0) {
    return absl::DataLossError(absl::StrCat(path, ": bad end marker at byte ", r.offset() - 8));
  }
  if (!(s = r.ReadPod(&total, "row total")).ok()) return s;
  if (total != rows) {
    return absl::DataLossError(
        absl::StrCat(path, ": footer counts ", total, " rows, tables hold ", rows));
  }
  const uint32_t expect = r.crc();
  uint32_t stored = 0;
  if (!(s = r.ReadPod(&stored, "checksum")).ok()) return s;
  if (stored != expect) {
    return absl::DataLossError(absl::StrFormat("%s: checksum mismatch (stored %08x, computed %08x)",
                                               path, stored, expect));
  }
  if (std::fgetc(f) != EOF) {
    return absl::DataLossError(absl::StrCat(path, ": trailing bytes after the footer"));
  }
  ShardFileInfo info;
  info.path = path;
  info.bytes = r.offset();
  info.crc32 = r.crc();
  info.rows = rows;
  return info;
}

absl::StatusOr<std::string> FileCrc32Hex(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  uint32_t crc = crc32(0, nullptr, 0);
  std::vector<unsigned char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    crc = crc32(crc, buf.data(), static_cast<uInt>(n));
  }
  std::fclose(f);
  return absl::StrFormat("%08x", crc);
}

}  // namespace herald::checkpoint
