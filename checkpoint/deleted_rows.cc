#include "checkpoint/deleted_rows.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace herald::checkpoint {
namespace {

constexpr size_t kRecordBytes = 16;

}  // namespace

std::string EncodeDeletedRows(const std::vector<DeletedRow>& rows) {
  std::string out(rows.size() * kRecordBytes, '\0');
  for (size_t i = 0; i < rows.size(); ++i) {
    char* at = out.data() + i * kRecordBytes;
    std::memcpy(at, &rows[i].table, sizeof(uint32_t));
    std::memcpy(at + 8, &rows[i].key, sizeof(Key));
  }
  return out;
}

absl::StatusOr<std::vector<DeletedRow>> ReadDeletedRows(const std::string& path, uint64_t rows,
                                                        const std::string& crc32_hex) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": no such file (deleted rows)"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string bytes = text.str();
  if (bytes.size() != rows * kRecordBytes) {
    return absl::DataLossError(absl::StrCat(path, ": ", bytes.size(), " bytes, ", rows,
                                            " deleted rows take ", rows * kRecordBytes));
  }
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  if (absl::StrFormat("%08x", crc) != absl::AsciiStrToLower(crc32_hex)) {
    return absl::DataLossError(absl::StrCat(path, ": checksum ", absl::StrFormat("%08x", crc),
                                            ", MODEL says ", crc32_hex));
  }
  std::vector<DeletedRow> out(rows);
  for (size_t i = 0; i < rows; ++i) {
    const char* at = bytes.data() + i * kRecordBytes;
    uint32_t pad = 0;
    std::memcpy(&out[i].table, at, sizeof(uint32_t));
    std::memcpy(&pad, at + 4, sizeof(uint32_t));
    std::memcpy(&out[i].key, at + 8, sizeof(Key));
    if (pad != 0 || (i > 0 && !(out[i - 1] < out[i]))) {
      return absl::DataLossError(absl::StrCat(
          path, ": record ", i, pad != 0 ? " has nonzero padding" : " is out of order"));
    }
  }
  return out;
}

}  // namespace herald::checkpoint
