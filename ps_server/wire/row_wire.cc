#include "ps_server/wire/row_wire.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace herald::ps::wire {
namespace {

constexpr uint64_t Pad8(uint64_t bytes) { return (bytes + 7) & ~uint64_t{7}; }

// Appends to a buffer sized in advance.
class Writer {
 public:
  // Every byte is written by Put and PutBytes (the sizes add up to
  // `bytes`): no clearing first.
  explicit Writer(uint64_t bytes) : buffer_(bytes) {}
  template <typename T>
  void Put(const T& value) {
    std::memcpy(buffer_.data() + at_, &value, sizeof(T));
    at_ += sizeof(T);
  }
  // `n` bytes, then zero padding to 8.
  void PutBytes(const void* bytes, uint64_t n) {
    if (n > 0) std::memcpy(buffer_.data() + at_, bytes, n);
    std::memset(buffer_.data() + at_ + n, 0, Pad8(n) - n);
    at_ += Pad8(n);
  }
  ucx::AlignedBuffer Finish() { return std::move(buffer_); }

 private:
  ucx::AlignedBuffer buffer_;
  uint64_t at_ = 0;
};

// Reads sections in place from a message, checking every length.
class Reader {
 public:
  explicit Reader(const ucx::AlignedBuffer& m) : data_(m.data()), size_(m.size()) {}
  uint64_t offset() const { return at_; }
  bool done() const { return at_ == size_; }

  template <typename T>
  absl::Status Get(T* out, const char* what) {
    if (size_ - at_ < sizeof(T)) return Short(what, sizeof(T));
    std::memcpy(out, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return absl::OkStatus();
  }
  // `count` elements of T in place (then padding to 8).
  template <typename T>
  absl::StatusOr<absl::Span<const T>> Array(uint64_t count, const char* what) {
    if (count > (size_ - at_) / sizeof(T)) return Short(what, count * sizeof(T));
    const T* first = reinterpret_cast<const T*>(data_ + at_);
    const uint64_t bytes = Pad8(count * sizeof(T));
    if (bytes > size_ - at_) return Short(what, bytes);
    at_ += bytes;
    return absl::MakeConstSpan(first, count);
  }
  absl::Status Short(const char* what, uint64_t want) const {
    return absl::InvalidArgumentError(absl::StrCat("row message: ", what, " at byte ", at_,
                                                   " needs ", want, " bytes, ", size_ - at_,
                                                   " left of ", size_));
  }

 private:
  const char* data_;
  uint64_t size_;
  uint64_t at_ = 0;
};

RequestHeader Header(Kind kind, std::string_view job_id, uint64_t run_id, uint64_t iteration,
                     uint32_t worker, uint32_t flags, size_t blocks) {
  RequestHeader h;
  h.kind = static_cast<uint16_t>(kind);
  h.iteration = iteration;
  h.worker = worker;
  h.flags = flags;
  h.num_blocks = static_cast<uint32_t>(blocks);
  h.job_id_bytes = static_cast<uint32_t>(job_id.size());
  h.run_id = run_id;
  return h;
}

absl::Status Invalid(const std::string& what, uint64_t offset) {
  return absl::InvalidArgumentError(absl::StrCat("row message: ", what, " at byte ", offset));
}

}  // namespace

ucx::AlignedBuffer EncodeFetch(std::string_view job_id, uint64_t run_id, const FetchIn& request) {
  uint64_t bytes = sizeof(RequestHeader) + Pad8(job_id.size());
  for (const KeysIn& b : request.blocks) bytes += sizeof(BlockHeader) + b.keys.size() * 8;
  Writer w(bytes);
  const uint32_t flags = (request.early != 0 ? kEarly : 0) | (request.read_only ? kReadOnly : 0) |
                         (request.early << kEarlyDistanceShift);
  w.Put(Header(Kind::kFetch, job_id, run_id, request.iteration, 0, flags, request.blocks.size()));
  w.PutBytes(job_id.data(), job_id.size());
  for (const KeysIn& b : request.blocks) {
    w.Put(BlockHeader{b.table, 0, b.keys.size()});
    w.PutBytes(b.keys.data(), b.keys.size() * 8);
  }
  return w.Finish();
}

ucx::AlignedBuffer EncodePush(std::string_view job_id, uint64_t run_id, const PushIn& request) {
  uint64_t bytes = sizeof(RequestHeader) + Pad8(job_id.size());
  for (const GradientsIn& b : request.blocks) {
    bytes += sizeof(BlockHeader) + b.keys.size() * 8 + Pad8(b.grads.size() * 4);
  }
  Writer w(bytes);
  w.Put(Header(Kind::kPush, job_id, run_id, request.iteration, request.worker, 0,
               request.blocks.size()));
  w.PutBytes(job_id.data(), job_id.size());
  for (const GradientsIn& b : request.blocks) {
    w.Put(BlockHeader{b.table, b.dim, b.keys.size()});
    w.PutBytes(b.keys.data(), b.keys.size() * 8);
    w.PutBytes(b.grads.data(), b.grads.size() * 4);
  }
  return w.Finish();
}

ucx::AlignedBuffer EncodeWriteBack(std::string_view job_id, uint64_t run_id,
                                   const WriteBackIn& request) {
  uint64_t bytes = sizeof(RequestHeader) + Pad8(job_id.size());
  for (const RowsIn& b : request.blocks) {
    bytes += sizeof(BlockHeader) + b.keys.size() * 16 + Pad8(b.rows.size() * 4);
  }
  Writer w(bytes);
  w.Put(Header(Kind::kWriteBack, job_id, run_id, request.iteration, request.worker, 0,
               request.blocks.size()));
  w.PutBytes(job_id.data(), job_id.size());
  for (const RowsIn& b : request.blocks) {
    w.Put(BlockHeader{b.table, b.row_floats, b.keys.size()});
    w.PutBytes(b.keys.data(), b.keys.size() * 8);
    w.PutBytes(b.rows.data(), b.rows.size() * 4);
    w.PutBytes(b.versions.data(), b.versions.size() * 8);
  }
  return w.Finish();
}

FetchReplyBuilder::FetchReplyBuilder(const std::vector<uint32_t>& tables,
                                     const std::vector<uint64_t>& counts,
                                     const std::vector<uint32_t>& row_floats) {
  uint64_t bytes = sizeof(ReplyHeader);
  for (size_t b = 0; b < counts.size(); ++b) {
    bytes += sizeof(BlockHeader) + Pad8(counts[b] * row_floats[b] * 4) + counts[b] * 8;
  }
  buffer_ = ucx::AlignedBuffer(bytes);
  ReplyHeader header;
  header.num_blocks = static_cast<uint32_t>(counts.size());
  std::memcpy(buffer_.data(), &header, sizeof(header));
  uint64_t at = sizeof(ReplyHeader);
  for (size_t b = 0; b < counts.size(); ++b) {
    const BlockHeader block{tables[b], row_floats[b], counts[b]};
    std::memcpy(buffer_.data() + at, &block, sizeof(block));
    at += sizeof(block);
    const uint64_t row_bytes = counts[b] * row_floats[b] * 4;
    RowsOut out{buffer_.data() + at, buffer_.data() + at + Pad8(row_bytes)};
    if (Pad8(row_bytes) != row_bytes) std::memset(buffer_.data() + at + row_bytes, 0, 4);
    outs_.push_back(out);
    at += Pad8(row_bytes) + counts[b] * 8;
  }
}

RowsOut FetchReplyBuilder::Out(size_t block) { return outs_[block]; }

absl::StatusOr<Request> DecodeRequest(const ucx::AlignedBuffer& message) {
  Reader r(message);
  RequestHeader h;
  if (absl::Status s = r.Get(&h, "the header"); !s.ok()) return s;
  if (h.magic != kMagic) return Invalid(absl::StrCat("magic 0x", absl::Hex(h.magic)), 0);
  if (h.version != kVersion) {
    return Invalid(absl::StrCat("version ", h.version, " (this server reads ", kVersion, ")"), 4);
  }
  Request out;
  out.kind = static_cast<Kind>(h.kind);
  if (out.kind != Kind::kFetch && out.kind != Kind::kPush && out.kind != Kind::kWriteBack) {
    return Invalid(absl::StrCat("kind ", h.kind), 6);
  }
  if (h.num_blocks > kMaxBlocks) {
    return Invalid(absl::StrCat(h.num_blocks, " blocks (at most ", kMaxBlocks, ")"), 24);
  }
  if (h.job_id_bytes > kMaxJobIdBytes) {
    return Invalid(absl::StrCat("a ", h.job_id_bytes, "-byte job id"), 28);
  }
  absl::StatusOr<absl::Span<const char>> job = r.Array<char>(h.job_id_bytes, "the job id");
  if (!job.ok()) return job.status();
  out.job_id = std::string_view(job->data(), job->size());
  out.run_id = h.run_id;
  out.fetch.iteration = out.push.iteration = out.write_back.iteration = h.iteration;
  out.push.worker = out.write_back.worker = h.worker;
  const uint32_t distance = (h.flags >> kEarlyDistanceShift) & 0xff;
  if (distance > kMaxEarlyDistance || ((h.flags & kEarly) == 0 && distance != 0)) {
    return Invalid(absl::StrCat("fetch flags 0x", absl::Hex(h.flags), ": early distance ", distance,
                                " (at most ", kMaxEarlyDistance, ", and only with the early flag)"),
                   offsetof(RequestHeader, flags));
  }
  out.fetch.early = (h.flags & kEarly) == 0 ? 0 : std::max<uint32_t>(distance, 1);
  out.fetch.read_only = (h.flags & kReadOnly) != 0;
  for (uint32_t i = 0; i < h.num_blocks; ++i) {
    const uint64_t at = r.offset();
    BlockHeader b;
    if (absl::Status s = r.Get(&b, "a block header"); !s.ok()) return s;
    const std::string block = absl::StrCat("block ", i);
    if (out.kind != Kind::kFetch && (b.width == 0 || b.width > kMaxWidth)) {
      return Invalid(absl::StrCat(block, ": width ", b.width, " (1..", kMaxWidth, ")"), at);
    }
    absl::StatusOr<absl::Span<const Key>> keys = r.Array<Key>(b.count, "keys");
    if (!keys.ok()) return keys.status();
    if (out.kind == Kind::kFetch) {
      out.fetch.blocks.push_back({b.table, *keys});
      continue;
    }
    if (b.count > UINT64_MAX / b.width) return Invalid(absl::StrCat(block, ": count"), at);
    absl::StatusOr<absl::Span<const float>> floats =
        r.Array<float>(b.count * b.width, out.kind == Kind::kPush ? "gradients" : "rows");
    if (!floats.ok()) return floats.status();
    if (out.kind == Kind::kPush) {
      out.push.blocks.push_back({b.table, b.width, *keys, *floats});
      continue;
    }
    absl::StatusOr<absl::Span<const uint64_t>> versions = r.Array<uint64_t>(b.count, "versions");
    if (!versions.ok()) return versions.status();
    out.write_back.blocks.push_back({b.table, b.width, *keys, *floats, *versions});
  }
  if (!r.done()) return Invalid("trailing bytes", r.offset());
  return out;
}

absl::StatusOr<std::vector<RowsView>> DecodeFetchReply(
    const ucx::AlignedBuffer& reply, const std::vector<uint64_t>& expected_counts) {
  Reader r(reply);
  ReplyHeader h;
  if (absl::Status s = r.Get(&h, "the reply header"); !s.ok()) return s;
  if (h.magic != kMagic || h.version != kVersion ||
      h.kind != static_cast<uint16_t>(Kind::kFetchReply)) {
    return Invalid("not a fetch reply of version 1", 0);
  }
  if (h.num_blocks != expected_counts.size()) {
    return absl::DataLossError(absl::StrCat("fetch reply: ", h.num_blocks, " blocks for ",
                                            expected_counts.size(), " asked"));
  }
  std::vector<RowsView> out;
  for (uint32_t i = 0; i < h.num_blocks; ++i) {
    const uint64_t at = r.offset();
    BlockHeader b;
    if (absl::Status s = r.Get(&b, "a block header"); !s.ok()) return s;
    if (b.count != expected_counts[i] || b.width == 0 || b.width > kMaxWidth) {
      return absl::DataLossError(absl::StrCat("fetch reply: block ", i, " has ", b.count,
                                              " rows of width ", b.width, " at byte ", at, " for ",
                                              expected_counts[i], " keys"));
    }
    RowsView v;
    v.table = b.table;
    v.row_floats = b.width;
    absl::StatusOr<absl::Span<const float>> rows = r.Array<float>(b.count * b.width, "rows");
    if (!rows.ok()) return rows.status();
    absl::StatusOr<absl::Span<const uint64_t>> versions = r.Array<uint64_t>(b.count, "versions");
    if (!versions.ok()) return versions.status();
    v.rows = *rows;
    v.versions = *versions;
    out.push_back(v);
  }
  if (!r.done()) return Invalid("trailing bytes", r.offset());
  return out;
}

}  // namespace herald::ps::wire
