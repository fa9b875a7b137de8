#pragma once
// Herald binary sample format (docs/data-formats.md): a checksummed header,
// blocks of columnar samples each with its own CRC-32, and an end marker that
// detects truncation. All integers little-endian.
//
//   file   := header block* end (stats trailer)?
//   header := "HRLDBIN1" u32 version(=1) u32 num_dense u32 num_sparse u32 flags(=0)
//             u32 crc32(previous 24 bytes) u32 reserved(=0)                 (32 bytes)
//           | "HRLDBIN2" u32 version(=2) u32 num_dense u32 num_sparse u32 num_labels
//             u32 schema_bytes u32 crc32(previous 28 bytes)                 (32 bytes)
//             schema[schema_bytes] (columns_codec.h) u32 crc32(schema)
//   block  := "BLK1" u32 num_samples u32 num_keys u32 flags u64 payload_bytes
//             u32 payload_crc32 u32 crc32(previous 28 bytes)                (32 bytes)
//             payload
//   payload:= labels[n*num_labels] (f32)
//             | dense[n*num_dense] (version 1: i32; version 2: f32, raw values)
//             | u32 dense_missing[n * W] (W = 1 for at most 32 dense values,
//               else ceil(num_dense / 32): bit i % 32 of word i / 32)
//             | lengths[n*num_sparse] (u8 if flags&1 else u32)
//             | keys[num_keys] (u32 if flags&2 else u64)
//             | weights[num_keys] (f32; version 2 whose schema has per-id
//               weights only)
//   end    := "END1" u32 0 u64 total_samples u32 0 u32 0 u32 0 u32 crc32(previous 28 bytes)
//   stats, trailer: the file's key statistics (binary_key_stats.h), after
//             the end marker where readers of the samples stop; files
//             written before them end at the end marker
//
// Version 1 is Criteo's layout (one label, integer dense values); version 2
// carries the column schema the samples were read with, so a job trains
// on it as on the text it came from.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/binary_key_stats.h"
#include "common/data/column_schema.h"
#include "common/data/input_stream.h"
#include "common/data/reader.h"
#include "common/data/writer.h"

namespace herald::data {

inline constexpr uint32_t kBinaryFormatVersion = 1;
inline constexpr uint32_t kBinaryFormatVersion2 = 2;
inline constexpr size_t kBinaryHeaderBytes = 32;
inline constexpr size_t kBinaryBlockHeaderBytes = 32;

// Writes samples into a binary file. Not thread-safe. Samples are buffered and
// written as blocks of `samples_per_block`. Close() writes the end marker; a
// writer destroyed without Close() leaves a file readers report as truncated.
class BinaryWriter final : public SampleWriter {
 public:
  // Version 1 (Criteo's layout): one label, integer dense values.
  static absl::StatusOr<std::unique_ptr<BinaryWriter>> Create(const std::string& path,
                                                              DataSchema schema,
                                                              size_t samples_per_block = 4096);
  // Version 2: samples of `columns.Layout()`, the schema in the header.
  // Errors: ValidateColumns's.
  static absl::StatusOr<std::unique_ptr<BinaryWriter>> CreateWithColumns(
      const std::string& path, const ColumnsSchema& columns, size_t samples_per_block = 4096);
  ~BinaryWriter() override;
  // Appends every sample of `block`. REQUIRES: block.schema equals the writer's.
  absl::Status Write(const SampleBlock& block) override;
  absl::Status Close() override;
  uint64_t samples_written() const { return total_; }

 private:
  BinaryWriter(std::FILE* f, std::string path, DataSchema schema, size_t samples_per_block,
               uint32_t version);
  static absl::StatusOr<std::unique_ptr<BinaryWriter>> CreateFile(const std::string& path,
                                                                  const std::string& header,
                                                                  DataSchema schema,
                                                                  size_t samples_per_block,
                                                                  uint32_t version);
  absl::Status FlushBlock();

  std::FILE* f_;
  uint32_t version_;
  std::string path_;
  DataSchema schema_;
  size_t samples_per_block_;
  SampleBlock pending_;
  KeyStats key_stats_;  // of every sample written
  uint64_t total_ = 0;
  bool closed_ = false;
};

// Reads binary files (in order). See SampleReader. A block whose checksum does
// not match is a malformed record (DataLoss under kFail, skipped under kSkip);
// a truncated file or a bad header is always an error (DataLoss /
// InvalidArgument), since nothing after it can be trusted.
class BinaryReader final : public SampleReader {
 public:
  BinaryReader(std::vector<std::string> names, InputOpener opener, ReaderOptions options);
  static absl::StatusOr<std::unique_ptr<BinaryReader>> Open(const std::vector<std::string>& paths,
                                                            ReaderOptions options);

  absl::StatusOr<size_t> Read(size_t max_samples, SampleBlock* out) override;
  const MalformedLog& malformed() const override { return malformed_; }
  DataSchema schema() const override { return options_.schema; }
  // Version 2 files: their column schema (known once the first file is
  // open: at once after Open, after the first Read otherwise).
  const ColumnsSchema* columns() const override { return columns_.get(); }
  // {0, next input} between inputs; else {1, input, offset of the block
  // being read (or of the next), samples of the input before it, its
  // index, samples of it already read}. Seek reopens the input, moves to
  // the block and reloads it (its checksum checked again).
  absl::StatusOr<std::vector<uint64_t>> Position() const override;
  absl::Status Seek(const std::vector<uint64_t>& position) override;

 private:
  absl::Status OpenNext();
  // Loads the next block into block_; false at the end of all inputs.
  absl::StatusOr<bool> LoadBlock();
  absl::Status ReadExact(char* buf, size_t n, const char* what);

  std::vector<std::string> names_;
  InputOpener opener_;
  ReaderOptions options_;
  MalformedLog malformed_;
  std::unique_ptr<InputStream> input_;
  size_t input_index_ = 0;
  uint64_t offset_ = 0;        // byte offset in the current input
  uint32_t version_ = 0;       // of the first file; every file must match
  std::string columns_bytes_;  // version 2: the first file's encoded schema
  std::unique_ptr<ColumnsSchema> columns_;
  uint64_t samples_in_file_ = 0;  // samples seen in the current input
  uint64_t block_index_ = 0;
  uint64_t block_offset_ = 0;        // of block_, in the current input
  uint64_t block_first_sample_ = 0;  // samples of the input before block_
  SampleBlock block_;
  size_t block_pos_ = 0;
  std::vector<char> payload_;
};

// Reads the schema from a binary file's header.
absl::StatusOr<DataSchema> ReadBinarySchema(const std::string& path);

// What a binary file's header says: its version, layout and (version 2)
// column schema.
struct BinaryHeader {
  uint32_t version = 0;
  DataSchema schema;
  std::unique_ptr<ColumnsSchema> columns;  // version 2
  std::string columns_bytes;               // version 2, as stored
  uint64_t bytes = 0;                      // the header's size in the file
};
absl::StatusOr<BinaryHeader> ReadBinaryHeader(const std::string& path);

}  // namespace herald::data
