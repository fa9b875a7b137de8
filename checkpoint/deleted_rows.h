#pragma once
// The rows an incremental export deletes (row expiry; ModelExport's
// deleted_file, docs/export.md "Incremental exports"): 16 bytes per row, a
// uint32 table id, 4 zero bytes and a uint64 key, little-endian, in
// ascending (table, key) order. A reader of a chain of exports drops these
// keys from the exports below before it overlays the increment's rows.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/ids.h"

namespace herald::checkpoint {

struct DeletedRow {
  uint32_t table = 0;
  Key key = 0;
  bool operator==(const DeletedRow& o) const { return table == o.table && key == o.key; }
  bool operator<(const DeletedRow& o) const {
    return table != o.table ? table < o.table : key < o.key;
  }
};

std::string EncodeDeletedRows(const std::vector<DeletedRow>& rows);

// Reads `path`, which must hold `rows` records with CRC-32 `crc32_hex` (8
// hex digits). Errors: NotFound, DataLoss naming the path (size, checksum,
// nonzero padding, order).
absl::StatusOr<std::vector<DeletedRow>> ReadDeletedRows(const std::string& path, uint64_t rows,
                                                        const std::string& crc32_hex);

}  // namespace herald::checkpoint
