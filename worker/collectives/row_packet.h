#pragma once
// The bytes one worker sends another in a row exchange (row_exchanger.h):
// rows as (version u64, then their floats), gradients as bare floats, one
// after another in the order both sides derive from the plan, in the
// byte order of the job's machines (the workers of one job share it).
// RowPacketWriter lays a packet out; RowPacketReader reads it back and
// refuses one that is shorter or longer than the plan says (DataLoss
// naming the peer and the offset) instead of reading past it.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace herald::worker {

class RowPacketWriter {
 public:
  // Bytes of one row of `floats` floats with its version.
  static constexpr size_t RowBytes(size_t floats) {
    return sizeof(uint64_t) + floats * sizeof(float);
  }
  void AddRow(uint64_t version, absl::Span<const float> values);
  void AddFloats(absl::Span<const float> values);
  size_t size() const { return bytes_.size(); }
  // The packet; the writer is empty afterwards.
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class RowPacketReader {
 public:
  // `bytes` must outlive the reader; `peer` names the sender in errors.
  RowPacketReader(const std::string& bytes, int peer) : bytes_(bytes), peer_(peer) {}
  // The next row: its version, and values.size() floats into `values`.
  absl::Status ReadRow(uint64_t* version, absl::Span<float> values);
  // The next values.size() floats.
  absl::Status ReadFloats(absl::Span<float> values);
  // Every byte was read. Errors: DataLoss (bytes left over).
  absl::Status Finish() const;

 private:
  absl::Status Read(void* out, size_t n, const char* what);

  const std::string& bytes_;
  const int peer_;
  size_t at_ = 0;
};

}  // namespace herald::worker
