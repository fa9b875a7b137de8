#pragma once
// The CSV reader's single-pass parser for the common shape of a line: no
// quotes, numbers written as plain decimals ("-12", "0.25"), hex ids of
// 1-16 digits, decimal ids of at most 19 digits, string ids. It either
// appends exactly what SplitFields + ParseFields append for the line, or
// declines and leaves the block as it was; the validating parser then
// decides (and names what is wrong). The CSV fuzz target checks the two
// agree on every line.

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/data/column_schema.h"
#include "common/data/csv_fields.h"
#include "common/data/sample_block.h"

namespace herald::data {

// Built for one schema and field map (a file's header); not thread-safe.
class CsvFastPath {
 public:
  CsvFastPath(const ColumnsSchema& schema, const FieldMap& map);

  // Returns true when the line was appended to `out` (layout
  // schema.Layout()); false, with `out` unchanged, for the validating
  // parser to decide. Always false when the schema has a separator (field
  // or multi-hot) that could be part of a number or an id's digits, and
  // for a schema with per-id weights.
  bool Parse(absl::string_view line, SampleBlock* out);

 private:
  // What the parser needs of a field, in file order.
  struct Field {
    ColumnRole role;  // kIgnore also for fields the schema skips
    bool binary_label;
    IdFormat ids;
    char multi_hot_separator;
    uint32_t max_ids;  // ids in one value at most
    uint32_t slot;
    float missing_value;
  };
  bool applies_;
  char separator_;
  std::vector<Field> fields_;
  DataSchema layout_;
  bool sparse_in_order_ = true;  // the file has the sparse features in slot order
  uint32_t sparse_seen_ = 0;
  std::vector<uint64_t> keys_;
  std::vector<std::pair<uint32_t, uint32_t>> feature_keys_;  // [begin, end) in keys_
};

}  // namespace herald::data
