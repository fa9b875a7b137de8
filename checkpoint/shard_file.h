#pragma once
// The checkpoint file of one shard (format: docs/checkpoints.md). Written to a
// temporary name and renamed into place by Finish(), so a reader never sees a
// partial file under the final name. Every byte is covered by a CRC-32.

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "common/ids.h"

namespace herald::checkpoint {

inline constexpr char kShardFileMagic[8] = {'H', 'R', 'L', 'D', 'S', 'H', 'R', 'D'};
inline constexpr char kShardFileEndMagic[8] = {'H', 'R', 'L', 'D', 'E', 'N', 'D', '1'};
inline constexpr uint32_t kShardFileVersion = 1;

struct ShardFileHeader {
  std::string job_id;
  uint32_t shard = 0;
  uint32_t num_shards = 1;
  uint64_t iteration = 0;
  uint32_t num_tables = 0;
};

struct ShardTableHeader {
  uint32_t table_id = 0;
  uint32_t dim = 0;
  uint32_t row_floats = 0;
  uint32_t optimizer_kind = 0;  // math::SparseOptimizerKind
  uint64_t rows = 0;
};

struct ShardFileInfo {
  std::string path;
  uint64_t bytes = 0;
  uint32_t crc32 = 0;  // of the whole file
  uint64_t rows = 0;
  // Gathering the rows and writing, fsyncing and renaming the file (set by
  // JobShard::Checkpoint; the wait for the commit before it not included).
  double write_ms = 0;
};

// Usage: Create, then for each table BeginTable and exactly `rows` AppendRow
// calls, then Finish. Dropping the writer without Finish removes the temp file.
class ShardFileWriter {
 public:
  static absl::StatusOr<std::unique_ptr<ShardFileWriter>> Create(const std::string& path,
                                                                 const ShardFileHeader& header);
  ~ShardFileWriter();

  absl::Status BeginTable(const ShardTableHeader& table);
  absl::Status AppendRow(Key key, uint64_t version, const float* row);
  // Writes the footer, fsyncs, renames to the final path, fsyncs the directory.
  absl::StatusOr<ShardFileInfo> Finish();

  const std::string& temp_path() const { return temp_path_; }

 private:
  ShardFileWriter(std::string path, std::string temp_path, std::FILE* file);
  // Appends to buffer_, which goes to the file once it holds kBufferBytes.
  absl::Status Write(const void* data, size_t n);
  // Writes buffer_ to the file and adds it to crc_.
  absl::Status Drain();

  static constexpr size_t kBufferBytes = size_t{1} << 20;
  std::string path_, temp_path_;
  std::FILE* file_;
  std::string buffer_;
  uint32_t crc_;  // of what Drain wrote
  uint64_t bytes_ = 0, rows_ = 0;
  uint64_t table_rows_left_ = 0;
  uint32_t row_floats_ = 0;
  bool finished_ = false;
};

// Reads a whole shard file, checking magic, version, sizes and the CRC, and
// calls on_table / on_row for its contents in file order. The CRC is checked
// at the end: callers must discard what they built if this returns an error.
// Errors: DataLoss naming the file and what is wrong; NotFound.
absl::StatusOr<ShardFileInfo> ReadShardFile(
    const std::string& path, ShardFileHeader* header,
    const std::function<absl::Status(const ShardTableHeader&)>& on_table,
    const std::function<absl::Status(Key, uint64_t, const float*)>& on_row);

// CRC-32 of a file, as 8 lowercase hex digits. Errors: NotFound.
absl::StatusOr<std::string> FileCrc32Hex(const std::string& path);

}  // namespace herald::checkpoint
