#pragma once
// The validating parser of delimited text described by a column schema: a
// line's fields, which schema column each holds, and their values. Every
// error names the column and the field. The reader: csv_reader.h.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/column_schema.h"
#include "common/data/sample_block.h"

namespace herald::data {

// Splits `line` at `separator` into `fields` (views into `line` or into
// `scratch`, which must not change while they are used). Errors: the
// reason, for an unterminated quote or a quote followed by other text.
absl::Status SplitFields(absl::string_view line, char separator,
                         std::vector<absl::string_view>* fields, std::string* scratch);

// How a file's fields map to the schema's columns: for each field, the
// schema column it holds, or -1 (skipped).
struct FieldMap {
  std::vector<int> column_of_field;
  // Each schema column's place among the columns of its role.
  std::vector<uint32_t> slot_of_column;
};

// The map of a header line. Errors (InvalidArgument, "<file>:1: ...") for
// a schema column the header lacks, a column named twice, or a header
// column the schema does not name (unless schema.ignore_other_columns).
absl::StatusOr<FieldMap> MapHeader(const ColumnsSchema& schema, absl::string_view header,
                                   const std::string& file);
// Without a header: field i is schema column i.
FieldMap SchemaOrder(const ColumnsSchema& schema);

// Sees every id of a string column as it is hashed: the sparse feature
// (its place among the sparse columns), the text and its key.
using StringIdObserver = std::function<void(uint32_t feature, absl::string_view id, uint64_t key)>;

// Parses one line's fields into `out` (whose layout is schema.Layout()).
// On error returns the reason naming the column ("column 'price' (field
// 3): not a number 'x'") and leaves `out` unchanged. `observer`, when
// given, sees the string ids of a line that was appended, and only those.
absl::Status ParseFields(const ColumnsSchema& schema, const FieldMap& map,
                         const std::vector<absl::string_view>& fields, SampleBlock* out,
                         const StringIdObserver* observer = nullptr);

}  // namespace herald::data
