#include "common/data/binary_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "common/crc32.h"
#include "common/data/binary_key_stats.h"
#include "common/data/byte_order.h"
#include "common/data/columns_codec.h"
#include "common/status.h"

namespace herald::data {
namespace {

constexpr char kFileMagic[8] = {'H', 'R', 'L', 'D', 'B', 'I', 'N', '1'};
constexpr char kFileMagicV2[8] = {'H', 'R', 'L', 'D', 'B', 'I', 'N', '2'};
// A stored schema larger than this is corrupt (a schema of the most
// columns with the longest names stays far below it).
constexpr uint32_t kMaxSchemaBytes = 16u << 20;
constexpr char kBlockMagic[4] = {'B', 'L', 'K', '1'};
constexpr char kEndMagic[4] = {'E', 'N', 'D', '1'};
constexpr uint32_t kFlagLengths8 = 1;
constexpr uint32_t kFlagKeys32 = 2;

// Blocks larger than this are rejected as corrupt before any allocation.
constexpr uint64_t kMaxBlockPayloadBytes = 256ull << 20;

// Reads exactly n bytes or fails naming what was being read.
using ReadExactFn = std::function<absl::Status(char* buf, size_t n, const char* what)>;

// Reads and checks a file header (either version): magic, checksums,
// version, and a version 2 file's column schema against its layout.
absl::StatusOr<BinaryHeader> ParseHeader(const ReadExactFn& read, const std::string& name) {
  char h[kBinaryHeaderBytes];
  HERALD_RETURN_IF_ERROR(read(h, sizeof(h), "file header"));
  BinaryHeader header;
  header.bytes = sizeof(h);
  const bool v2 = std::memcmp(h, kFileMagicV2, 8) == 0;
  if (!v2 && std::memcmp(h, kFileMagic, 8) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a Herald binary file (bad magic)"));
  }
  const uint32_t crc_at = v2 ? 28 : 24;
  if (Get<uint32_t>(h + crc_at) != Crc32(h, crc_at)) {
    return absl::DataLossError(absl::StrCat(name, ": header checksum mismatch"));
  }
  header.version = Get<uint32_t>(h + 8);
  if (header.version != (v2 ? kBinaryFormatVersion2 : kBinaryFormatVersion)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": unsupported format version ",
                                                   header.version, " (this build reads 1 and 2)"));
  }
  header.schema = DataSchema{Get<uint32_t>(h + 12), Get<uint32_t>(h + 16)};
  if (!v2) return header;
  header.schema.num_labels = Get<uint32_t>(h + 20);
  const uint32_t schema_bytes = Get<uint32_t>(h + 24);
  if (schema_bytes > kMaxSchemaBytes) {
    return absl::DataLossError(
        absl::StrCat(name, ": a stored schema of ", schema_bytes, " bytes (corrupt header)"));
  }
  header.columns_bytes.resize(schema_bytes);
  char crc[4];
  HERALD_RETURN_IF_ERROR(read(header.columns_bytes.data(), schema_bytes, "stored schema"));
  HERALD_RETURN_IF_ERROR(read(crc, sizeof(crc), "stored schema checksum"));
  header.bytes += schema_bytes + sizeof(crc);
  if (Get<uint32_t>(crc) != Crc32(header.columns_bytes.data(), schema_bytes)) {
    return absl::DataLossError(absl::StrCat(name, ": stored schema checksum mismatch"));
  }
  absl::StatusOr<ColumnsSchema> columns = DecodeColumns(header.columns_bytes);
  if (!columns.ok()) {
    return absl::DataLossError(absl::StrCat(name, ": stored schema: ", columns.status().message()));
  }
  header.schema.weighted = columns->Layout().weighted;
  if (!(columns->Layout() == header.schema)) {
    return absl::DataLossError(
        absl::StrCat(name, ": the stored schema's columns do not match the header's counts"));
  }
  header.columns = std::make_unique<ColumnsSchema>(*std::move(columns));
  return header;
}

}  // namespace

// ------------------------------------------------------------------ writer

BinaryWriter::BinaryWriter(std::FILE* f, std::string path, DataSchema schema,
                           size_t samples_per_block, uint32_t version)
    : f_(f),
      version_(version),
      path_(std::move(path)),
      schema_(schema),
      samples_per_block_(samples_per_block),
      pending_(schema),
      key_stats_(EmptyKeyStats(schema.num_sparse)) {}

BinaryWriter::~BinaryWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

absl::StatusOr<std::unique_ptr<BinaryWriter>> BinaryWriter::Create(const std::string& path,
                                                                   DataSchema schema,
                                                                   size_t samples_per_block) {
  if (schema.num_dense > DataSchema::kMaxCriteoDense ||
      schema.num_sparse > DataSchema::kMaxSparse || samples_per_block == 0) {
    return absl::InvalidArgumentError("binary writer: unsupported schema or block size");
  }
  if (schema.num_labels != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": binary format version 1 holds one label per sample; the data has ",
                     schema.num_labels, " (version 2 holds several: convert --schema)"));
  }
  std::string header(kFileMagic, 8);
  Put<uint32_t>(&header, kBinaryFormatVersion);
  Put<uint32_t>(&header, schema.num_dense);
  Put<uint32_t>(&header, schema.num_sparse);
  Put<uint32_t>(&header, 0);
  Put<uint32_t>(&header, Crc32(header.data(), header.size()));
  Put<uint32_t>(&header, 0);
  return CreateFile(path, header, schema, samples_per_block, kBinaryFormatVersion);
}

absl::StatusOr<std::unique_ptr<BinaryWriter>> BinaryWriter::CreateWithColumns(
    const std::string& path, const ColumnsSchema& columns, size_t samples_per_block) {
  HERALD_RETURN_IF_ERROR(ValidateColumns(columns));
  if (samples_per_block == 0) return absl::InvalidArgumentError("binary writer: block size 0");
  const DataSchema schema = columns.Layout();
  const std::string stored = EncodeColumns(columns);
  std::string header(kFileMagicV2, 8);
  Put<uint32_t>(&header, kBinaryFormatVersion2);
  Put<uint32_t>(&header, schema.num_dense);
  Put<uint32_t>(&header, schema.num_sparse);
  Put<uint32_t>(&header, schema.num_labels);
  Put<uint32_t>(&header, static_cast<uint32_t>(stored.size()));
  Put<uint32_t>(&header, Crc32(header.data(), header.size()));
  header += stored;
  Put<uint32_t>(&header, Crc32(stored.data(), stored.size()));
  return CreateFile(path, header, schema, samples_per_block, kBinaryFormatVersion2);
}

absl::StatusOr<std::unique_ptr<BinaryWriter>> BinaryWriter::CreateFile(const std::string& path,
                                                                       const std::string& header,
                                                                       DataSchema schema,
                                                                       size_t samples_per_block,
                                                                       uint32_t version) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return absl::UnavailableError(absl::StrCat("cannot create ", path));
  if (std::fwrite(header.data(), 1, header.size(), f) != header.size()) {
    std::fclose(f);
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return std::unique_ptr<BinaryWriter>(
      new BinaryWriter(f, path, schema, samples_per_block, version));
}

absl::Status BinaryWriter::Write(const SampleBlock& block) {
  if (closed_) return absl::FailedPreconditionError("binary writer is closed");
  if (!(block.schema == schema_)) return absl::InvalidArgumentError("schema mismatch");
  for (size_t s = 0; version_ == kBinaryFormatVersion && s < block.size(); ++s) {
    for (uint32_t i = 0; i < schema_.num_dense; ++i) {
      const float v = block.Dense(s, i);
      if (!(v == std::trunc(v) && v >= -2147483648.0f && v < 2147483648.0f)) {
        return absl::InvalidArgumentError(absl::StrCat(
            path_, ": binary format version 1 holds integer dense values; sample ", s, " has ", v,
            " in dense feature ", i + 1, " (version 2 holds floats: convert --schema)"));
      }
    }
  }
  key_stats_.Add(block);
  for (size_t s = 0; s < block.size(); ++s) {
    pending_.AppendFrom(block, s);
    if (pending_.size() >= samples_per_block_) HERALD_RETURN_IF_ERROR(FlushBlock());
  }
  return absl::OkStatus();
}

absl::Status BinaryWriter::FlushBlock() {
  const size_t n = pending_.size();
  if (n == 0) return absl::OkStatus();
  const size_t cells = n * schema_.num_sparse;
  uint32_t flags = 0;
  bool lengths8 = true, keys32 = true;
  for (size_t i = 0; i < cells; ++i) {
    if (pending_.offsets[i + 1] - pending_.offsets[i] > 255) lengths8 = false;
  }
  for (uint64_t k : pending_.keys) {
    if (k > 0xFFFFFFFFull) keys32 = false;
  }
  if (lengths8) flags |= kFlagLengths8;
  if (keys32) flags |= kFlagKeys32;

  std::string payload;
  PutArray(&payload, pending_.labels.data(), pending_.labels.size());
  if (version_ == kBinaryFormatVersion) {
    std::vector<int32_t> dense(pending_.dense.begin(), pending_.dense.end());  // integers (Write)
    PutArray(&payload, dense.data(), dense.size());
  } else {
    PutArray(&payload, pending_.dense.data(), pending_.dense.size());
  }
  PutArray(&payload, pending_.dense_missing.data(), pending_.dense_missing.size());
  for (size_t i = 0; i < cells; ++i) {
    uint32_t len = pending_.offsets[i + 1] - pending_.offsets[i];
    if (lengths8) {
      payload.push_back(static_cast<char>(len));
    } else {
      Put<uint32_t>(&payload, len);
    }
  }
  for (uint64_t k : pending_.keys) {
    if (keys32) {
      Put<uint32_t>(&payload, static_cast<uint32_t>(k));
    } else {
      Put<uint64_t>(&payload, k);
    }
  }
  PutArray(&payload, pending_.weights.data(), pending_.weights.size());

  std::string header(kBlockMagic, 4);
  Put<uint32_t>(&header, static_cast<uint32_t>(n));
  Put<uint32_t>(&header, static_cast<uint32_t>(pending_.keys.size()));
  Put<uint32_t>(&header, flags);
  Put<uint64_t>(&header, payload.size());
  Put<uint32_t>(&header, Crc32(payload.data(), payload.size()));
  Put<uint32_t>(&header, Crc32(header.data(), header.size()));
  if (std::fwrite(header.data(), 1, header.size(), f_) != header.size() ||
      std::fwrite(payload.data(), 1, payload.size(), f_) != payload.size()) {
    return absl::UnavailableError(absl::StrCat("write to ", path_, " failed"));
  }
  total_ += n;
  pending_.Clear();
  return absl::OkStatus();
}

absl::Status BinaryWriter::Close() {
  if (closed_) return absl::OkStatus();
  HERALD_RETURN_IF_ERROR(FlushBlock());
  std::string end(kEndMagic, 4);
  Put<uint32_t>(&end, 0);
  Put<uint64_t>(&end, total_);
  Put<uint32_t>(&end, 0);
  Put<uint32_t>(&end, 0);
  Put<uint32_t>(&end, 0);
  Put<uint32_t>(&end, Crc32(end.data(), end.size()));
  closed_ = true;
  bool ok = std::fwrite(end.data(), 1, end.size(), f_) == end.size();
  // After the end marker, where readers of the samples (of every version)
  // stop: the key statistics and the trailer that finds them.
  const off_t stats_at = ftello(f_);
  const std::string stats = EncodeKeyStats(key_stats_);
  const std::string trailer = KeyStatsTrailer(static_cast<uint64_t>(stats_at), stats.size());
  ok = ok && stats_at > 0 && std::fwrite(stats.data(), 1, stats.size(), f_) == stats.size();
  ok = ok && std::fwrite(trailer.data(), 1, trailer.size(), f_) == trailer.size();
  ok = (std::fclose(f_) == 0) && ok;
  f_ = nullptr;
  if (!ok) return absl::UnavailableError(absl::StrCat("write to ", path_, " failed"));
  return absl::OkStatus();
}

// ------------------------------------------------------------------ reader

BinaryReader::BinaryReader(std::vector<std::string> names, InputOpener opener,
                           ReaderOptions options)
    : names_(std::move(names)),
      opener_(std::move(opener)),
      options_(options),
      malformed_(options.max_malformed_kept),
      block_(options.schema) {}

absl::StatusOr<std::unique_ptr<BinaryReader>> BinaryReader::Open(
    const std::vector<std::string>& paths, ReaderOptions options) {
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputPaths(paths));
  // The first file's header at once: its version and stored schema.
  HERALD_ASSIGN_OR_RETURN(BinaryHeader first, ReadBinaryHeader(files.front()));
  InputOpener opener = FileOpener(files);
  auto reader = std::make_unique<BinaryReader>(std::move(files), std::move(opener), options);
  reader->version_ = first.version;
  reader->columns_bytes_ = std::move(first.columns_bytes);
  reader->columns_ = std::move(first.columns);
  return reader;
}

absl::Status BinaryReader::ReadExact(char* buf, size_t n, const char* what) {
  size_t got = 0;
  while (got < n) {
    HERALD_ASSIGN_OR_RETURN(size_t k, input_->Read(buf + got, n - got));
    if (k == 0) {
      return MalformedError(absl::StatusCode::kDataLoss,
                            {names_[input_index_ - 1], 0,
                             absl::StrCat("truncated file: ", what, " at offset ", offset_,
                                          " ends after ", got, " of ", n, " bytes")});
    }
    got += k;
  }
  offset_ += n;
  return absl::OkStatus();
}

absl::Status BinaryReader::OpenNext() {
  HERALD_ASSIGN_OR_RETURN(input_, opener_(input_index_));
  ++input_index_;
  offset_ = 0;
  samples_in_file_ = 0;
  block_index_ = 0;
  const std::string& name = names_[input_index_ - 1];
  HERALD_ASSIGN_OR_RETURN(
      BinaryHeader header,
      ParseHeader([this](char* b, size_t n, const char* what) { return ReadExact(b, n, what); },
                  name));
  if (version_ == 0) {  // the first file sets what every file must be
    version_ = header.version;
    columns_bytes_ = header.columns_bytes;
    columns_ = std::move(header.columns);
  } else if (header.version != version_ || header.columns_bytes != columns_bytes_) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": format version ", header.version,
                     header.version == version_ ? " with another stored schema" : "",
                     " differs from the first input's (", names_.front(), ", version ", version_,
                     "): the inputs of one reader share one schema"));
  }
  const DataSchema& schema = header.schema;
  if (!(schema == options_.schema)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": file has ", schema.num_labels, " labels, ", schema.num_dense, " dense and ",
        schema.num_sparse, " categorical features, expected ", options_.schema.num_labels, ", ",
        options_.schema.num_dense, " and ", options_.schema.num_sparse));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> BinaryReader::LoadBlock() {
  block_.Clear();
  block_pos_ = 0;
  while (true) {
    if (input_ == nullptr) {
      if (input_index_ >= names_.size()) return false;
      HERALD_RETURN_IF_ERROR(OpenNext());
    }
    const std::string& name = names_[input_index_ - 1];
    char h[kBinaryBlockHeaderBytes];
    const uint64_t block_offset = offset_;
    HERALD_RETURN_IF_ERROR(ReadExact(h, sizeof(h), "block header"));
    if (Get<uint32_t>(h + 28) != Crc32(h, 28)) {
      // A damaged header means block boundaries are lost: nothing after it can be read.
      return absl::DataLossError(absl::StrCat(name, ": block ", block_index_, " at offset ",
                                              block_offset, ": header checksum mismatch"));
    }
    if (std::memcmp(h, kEndMagic, 4) == 0) {
      uint64_t total = Get<uint64_t>(h + 8);
      if (total != samples_in_file_) {
        return absl::DataLossError(absl::StrCat(name, ": end marker counts ", total,
                                                " samples, blocks hold ", samples_in_file_));
      }
      input_.reset();
      continue;
    }
    if (std::memcmp(h, kBlockMagic, 4) != 0) {
      return absl::DataLossError(
          absl::StrCat(name, ": block ", block_index_, " at offset ", block_offset, ": bad magic"));
    }
    const uint32_t n = Get<uint32_t>(h + 4);
    const uint32_t num_keys = Get<uint32_t>(h + 8);
    const uint32_t flags = Get<uint32_t>(h + 12);
    const uint64_t payload_bytes = Get<uint64_t>(h + 16);
    const uint32_t payload_crc = Get<uint32_t>(h + 24);
    const DataSchema& schema = options_.schema;
    const uint64_t cells = static_cast<uint64_t>(n) * schema.num_sparse;
    const uint64_t expected =
        uint64_t{n} * schema.num_labels * 4 + uint64_t{n} * schema.num_dense * 4 +
        uint64_t{n} * schema.missing_words() * 4 + cells * ((flags & kFlagLengths8) ? 1 : 4) +
        uint64_t{num_keys} * ((flags & kFlagKeys32) ? 4 : 8) +
        (schema.weighted ? uint64_t{num_keys} * 4 : 0);
    if (payload_bytes != expected || payload_bytes > kMaxBlockPayloadBytes) {
      return absl::DataLossError(absl::StrCat(name, ": block ", block_index_, " at offset ",
                                              block_offset, ": payload size ", payload_bytes,
                                              " does not match its counts (", expected, ")"));
    }
    payload_.resize(payload_bytes);
    HERALD_RETURN_IF_ERROR(ReadExact(payload_.data(), payload_bytes, "block payload"));
    const uint64_t first_sample = samples_in_file_;
    block_offset_ = block_offset;
    block_first_sample_ = first_sample;
    samples_in_file_ += n;
    ++block_index_;
    if (Crc32(payload_.data(), payload_bytes) != payload_crc) {
      MalformedRecord record{name, first_sample + 1,
                             absl::StrCat("block ", block_index_ - 1, " at offset ", block_offset,
                                          " (", n, " samples): checksum mismatch")};
      if (options_.on_malformed == OnMalformed::kFail) {
        return MalformedError(absl::StatusCode::kDataLoss, record);
      }
      malformed_.Add(std::move(record));
      continue;
    }
    // Decode.
    const char* p = payload_.data();
    block_.labels.resize(uint64_t{n} * schema.num_labels);
    std::memcpy(block_.labels.data(), p, block_.labels.size() * 4);
    p += block_.labels.size() * 4;
    block_.dense.resize(uint64_t{n} * schema.num_dense);
    if (version_ == kBinaryFormatVersion) {
      for (size_t i = 0; i < block_.dense.size(); ++i) {
        block_.dense[i] = static_cast<float>(Get<int32_t>(p + 4 * i));  // as the TSV reader does
      }
    } else {
      std::memcpy(block_.dense.data(), p, block_.dense.size() * 4);
    }
    p += block_.dense.size() * 4;
    block_.dense_missing.resize(uint64_t{n} * schema.missing_words());
    std::memcpy(block_.dense_missing.data(), p, block_.dense_missing.size() * 4);
    p += block_.dense_missing.size() * 4;
    block_.offsets.resize(cells + 1);
    block_.offsets[0] = 0;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < cells; ++i) {
      uint32_t len =
          (flags & kFlagLengths8) ? static_cast<uint8_t>(p[i]) : Get<uint32_t>(p + 4 * i);
      sum += len;
      block_.offsets[i + 1] = static_cast<uint32_t>(std::min<uint64_t>(sum, num_keys));
    }
    p += cells * ((flags & kFlagLengths8) ? 1 : 4);
    if (sum != num_keys) {
      // The checksum matched, so the writer produced this: a format violation.
      return absl::DataLossError(absl::StrCat(name, ": block ", block_index_ - 1,
                                              ": lengths sum to ", sum, ", header says ", num_keys,
                                              " keys"));
    }
    block_.keys.resize(num_keys);
    for (uint32_t i = 0; i < num_keys; ++i) {
      block_.keys[i] = (flags & kFlagKeys32) ? Get<uint32_t>(p + 4 * uint64_t{i})
                                             : Get<uint64_t>(p + 8 * uint64_t{i});
    }
    p += uint64_t{num_keys} * ((flags & kFlagKeys32) ? 4 : 8);
    if (schema.weighted) {
      block_.weights.resize(num_keys);
      std::memcpy(block_.weights.data(), p, size_t{num_keys} * 4);
    }
    return true;
  }
}

absl::StatusOr<size_t> BinaryReader::Read(size_t max_samples, SampleBlock* out) {
  if (!(out->schema == options_.schema)) {
    return absl::InvalidArgumentError("sample block schema differs from the reader's schema");
  }
  size_t appended = 0;
  while (appended < max_samples) {
    if (block_pos_ >= block_.size()) {
      HERALD_ASSIGN_OR_RETURN(bool more, LoadBlock());
      if (!more) break;
      continue;
    }
    const size_t take = std::min(max_samples - appended, block_.size() - block_pos_);
    out->AppendRange(block_, block_pos_, block_pos_ + take);
    block_pos_ += take;
    appended += take;
  }
  return appended;
}

absl::StatusOr<std::vector<uint64_t>> BinaryReader::Position() const {
  if (input_ == nullptr) return std::vector<uint64_t>{0, input_index_};
  if (block_pos_ < block_.size()) {
    return std::vector<uint64_t>{
        1, input_index_ - 1, block_offset_, block_first_sample_, block_index_ - 1, block_pos_};
  }
  return std::vector<uint64_t>{1, input_index_ - 1, offset_, samples_in_file_, block_index_, 0};
}

absl::Status BinaryReader::Seek(const std::vector<uint64_t>& p) {
  auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(
        absl::StrCat("binary reader position (", p.size(), " words): ", why));
  };
  if (p.size() == 2 && p[0] == 0) {
    if (p[1] > names_.size()) return bad("input index beyond the inputs");
    input_.reset();
    input_index_ = p[1];
    block_.Clear();
    block_pos_ = 0;
    return absl::OkStatus();
  }
  if (p.size() != 6 || p[0] != 1) return bad("not a position");
  if (p[1] >= names_.size()) return bad("input index beyond the inputs");
  if (p[2] < kBinaryHeaderBytes) return bad("offset inside the file header");
  input_index_ = p[1];
  HERALD_RETURN_IF_ERROR(OpenNext());
  if (p[2] < offset_) return bad("offset inside the file header");
  HERALD_RETURN_IF_ERROR(input_->Skip(p[2] - offset_));
  offset_ = p[2];
  samples_in_file_ = p[3];
  block_index_ = p[4];
  block_.Clear();
  block_pos_ = 0;
  if (p[5] == 0) return absl::OkStatus();
  HERALD_ASSIGN_OR_RETURN(bool loaded, LoadBlock());
  if (!loaded || block_index_ != p[4] + 1 || p[5] > block_.size()) {
    return absl::DataLossError(absl::StrCat(names_[p[1]], ": block ", p[4], " at offset ", p[2],
                                            " is not the block the position was taken in (the "
                                            "input changed since)"));
  }
  block_pos_ = p[5];
  return absl::OkStatus();
}

absl::StatusOr<BinaryHeader> ReadBinaryHeader(const std::string& path) {
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, OpenFileInput(path));
  auto read = [&](char* buf, size_t n, const char* what) -> absl::Status {
    size_t got = 0;
    while (got < n) {
      HERALD_ASSIGN_OR_RETURN(size_t k, in->Read(buf + got, n - got));
      if (k == 0) return absl::DataLossError(absl::StrCat(path, ": truncated ", what));
      got += k;
    }
    return absl::OkStatus();
  };
  return ParseHeader(read, path);
}

absl::StatusOr<DataSchema> ReadBinarySchema(const std::string& path) {
  HERALD_ASSIGN_OR_RETURN(BinaryHeader header, ReadBinaryHeader(path));
  return header.schema;
}

}  // namespace herald::data
