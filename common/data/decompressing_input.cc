#include "common/data/decompressing_input.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace herald::data {
namespace {

constexpr size_t kCompressedChunk = 1 << 16;

// `prefix` (bytes already read from `raw`), then the rest of `raw`.
class PrefixedStream final : public InputStream {
 public:
  PrefixedStream(std::string prefix, std::unique_ptr<InputStream> raw)
      : prefix_(std::move(prefix)), raw_(std::move(raw)) {}
  absl::StatusOr<size_t> Read(char* buf, size_t n) override {
    if (pos_ < prefix_.size()) {
      size_t k = std::min(n, prefix_.size() - pos_);
      std::memcpy(buf, prefix_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    return raw_->Read(buf, n);
  }
  absl::Status Skip(uint64_t n) override {
    size_t k = std::min<uint64_t>(n, prefix_.size() - pos_);
    pos_ += k;
    return n > k ? raw_->Skip(n - k) : absl::OkStatus();
  }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<InputStream> raw_;
};

// Compressed bytes in chunks, for the decoders below.
class CompressedSource {
 public:
  CompressedSource(std::unique_ptr<InputStream> raw)
      : raw_(std::move(raw)), buf_(kCompressedChunk) {}
  // Refills when everything was consumed; false at the end of the input.
  absl::StatusOr<bool> Fill() {
    if (pos_ < end_) return true;
    HERALD_ASSIGN_OR_RETURN(end_, raw_->Read(buf_.data(), buf_.size()));
    consumed_before_ += pos_;
    pos_ = 0;
    return end_ > 0;
  }
  const char* data() const { return buf_.data() + pos_; }
  size_t size() const { return end_ - pos_; }
  void Consume(size_t n) { pos_ += n; }
  uint64_t offset() const { return consumed_before_ + pos_; }

 private:
  std::unique_ptr<InputStream> raw_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t consumed_before_ = 0;
};

class GzipStream final : public InputStream {
 public:
  GzipStream(std::unique_ptr<InputStream> raw, std::string name)
      : in_(std::move(raw)), name_(std::move(name)) {
    std::memset(&z_, 0, sizeof(z_));
    ok_ = inflateInit2(&z_, 15 + 16) == Z_OK;  // gzip wrapper only
  }
  ~GzipStream() override { inflateEnd(&z_); }

  absl::StatusOr<size_t> Read(char* buf, size_t n) override {
    if (!ok_) return absl::ResourceExhaustedError(absl::StrCat(name_, ": cannot start gzip"));
    size_t produced = 0;
    while (produced < n) {
      HERALD_ASSIGN_OR_RETURN(bool more, in_.Fill());
      if (!more && !in_member_) break;
      // At the end of the input the decoder may still hold output.
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data()));
      z_.avail_in = static_cast<uInt>(in_.size());
      z_.next_out = reinterpret_cast<Bytef*>(buf + produced);
      z_.avail_out = static_cast<uInt>(std::min<size_t>(n - produced, 1u << 30));
      const uInt before_in = z_.avail_in, before_out = z_.avail_out;
      in_member_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      in_.Consume(before_in - z_.avail_in);
      produced += before_out - z_.avail_out;
      if (rc == Z_STREAM_END) {
        in_member_ = false;  // another member may follow (concatenated gzip)
        inflateReset(&z_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat(name_, ": corrupt gzip data near compressed byte ",
                                                in_.offset(), ": ",
                                                z_.msg != nullptr ? z_.msg : "inflate failed"));
      } else if (!more && before_out == z_.avail_out) {
        return absl::DataLossError(absl::StrCat(name_, ": gzip data ends early (truncated at ",
                                                in_.offset(), " compressed bytes)"));
      }
    }
    return produced;
  }

 private:
  CompressedSource in_;
  std::string name_;
  z_stream z_;
  bool ok_ = false;
  bool in_member_ = false;
};

class ZstdStream final : public InputStream {
 public:
  ZstdStream(std::unique_ptr<InputStream> raw, std::string name)
      : in_(std::move(raw)), name_(std::move(name)), d_(ZSTD_createDStream()) {}
  ~ZstdStream() override { ZSTD_freeDStream(d_); }

  absl::StatusOr<size_t> Read(char* buf, size_t n) override {
    if (d_ == nullptr)
      return absl::ResourceExhaustedError(absl::StrCat(name_, ": cannot start zstd"));
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos < out.size) {
      HERALD_ASSIGN_OR_RETURN(bool more, in_.Fill());
      if (!more && !in_frame_) break;
      // At the end of the input the decoder may still hold output.
      ZSTD_inBuffer in{in_.data(), in_.size(), 0};
      const size_t before_out = out.pos;
      size_t rc = ZSTD_decompressStream(d_, &out, &in);
      in_.Consume(in.pos);
      if (ZSTD_isError(rc)) {
        return absl::DataLossError(absl::StrCat(name_, ": corrupt zstd data near compressed byte ",
                                                in_.offset(), ": ", ZSTD_getErrorName(rc)));
      }
      in_frame_ = rc != 0;  // 0: a frame ended and was flushed whole
      if (!more && in_frame_ && out.pos == before_out) {
        return absl::DataLossError(absl::StrCat(name_, ": zstd data ends early (truncated at ",
                                                in_.offset(), " compressed bytes)"));
      }
    }
    return out.pos;
  }

 private:
  CompressedSource in_;
  std::string name_;
  ZSTD_DStream* d_;
  bool in_frame_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<InputStream>> Decompressing(std::unique_ptr<InputStream> raw,
                                                           std::string name) {
  char magic[4];
  size_t got = 0;
  while (got < sizeof(magic)) {
    HERALD_ASSIGN_OR_RETURN(size_t k, raw->Read(magic + got, sizeof(magic) - got));
    if (k == 0) break;
    got += k;
  }
  auto prefixed = std::make_unique<PrefixedStream>(std::string(magic, got), std::move(raw));
  const auto u = [&](int i) { return static_cast<unsigned char>(magic[i]); };
  if (got >= 2 && u(0) == 0x1f && u(1) == 0x8b) {
    return std::make_unique<GzipStream>(std::move(prefixed), std::move(name));
  }
  if (got == 4 && u(0) == 0x28 && u(1) == 0xb5 && u(2) == 0x2f && u(3) == 0xfd) {
    return std::make_unique<ZstdStream>(std::move(prefixed), std::move(name));
  }
  return prefixed;
}

}  // namespace herald::data
