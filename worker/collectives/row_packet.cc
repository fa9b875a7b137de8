#include "worker/collectives/row_packet.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace herald::worker {

void RowPacketWriter::AddRow(uint64_t version, absl::Span<const float> values) {
  const size_t at = bytes_.size();
  bytes_.resize(at + RowBytes(values.size()));
  std::memcpy(bytes_.data() + at, &version, sizeof(version));
  if (!values.empty()) {
    std::memcpy(bytes_.data() + at + sizeof(version), values.data(), values.size() * sizeof(float));
  }
}

void RowPacketWriter::AddFloats(absl::Span<const float> values) {
  const size_t at = bytes_.size();
  bytes_.resize(at + values.size() * sizeof(float));
  if (!values.empty())
    std::memcpy(bytes_.data() + at, values.data(), values.size() * sizeof(float));
}

absl::Status RowPacketReader::Read(void* out, size_t n, const char* what) {
  if (n > bytes_.size() - at_) {
    return absl::DataLossError(absl::StrCat("row exchange: the packet from rank ", peer_,
                                            " ends at ", bytes_.size(), " bytes, inside ", what,
                                            " at byte ", at_, " (", n, " bytes)"));
  }
  if (n > 0) std::memcpy(out, bytes_.data() + at_, n);
  at_ += n;
  return absl::OkStatus();
}

absl::Status RowPacketReader::ReadRow(uint64_t* version, absl::Span<float> values) {
  if (absl::Status s = Read(version, sizeof(*version), "a row's version"); !s.ok()) return s;
  return Read(values.data(), values.size() * sizeof(float), "a row's values");
}

absl::Status RowPacketReader::ReadFloats(absl::Span<float> values) {
  return Read(values.data(), values.size() * sizeof(float), "a gradient");
}

absl::Status RowPacketReader::Finish() const {
  if (at_ == bytes_.size()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("row exchange: the packet from rank ", peer_, " has ",
                                          bytes_.size() - at_, " bytes past what the plan reads (",
                                          at_, " of ", bytes_.size(), ")"));
}

}  // namespace herald::worker
