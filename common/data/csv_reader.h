#pragma once
// Delimited text (CSV, TSV, any one-byte separator) described by a column
// schema: a header line naming the columns in any order, or columns in the
// schema's order. Fields may be double-quoted ("" inside is one quote); a
// quoted field does not span lines. A trailing '\r' is ignored. Full
// description: docs/data-formats.md, "Schemas".

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/column_schema.h"
#include "common/data/input_stream.h"
#include "common/data/line_source.h"
#include "common/data/reader.h"

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

// Parses one line's fields into `out` (whose layout is schema.Layout()).
// On error returns the reason naming the column ("column 'price' (field
// 3): not a number 'x'") and leaves `out` unchanged.
absl::Status ParseFields(const ColumnsSchema& schema, const FieldMap& map,
                         const std::vector<absl::string_view>& fields, SampleBlock* out);

class CsvReader final : public SampleReader {
 public:
  CsvReader(std::vector<std::string> names, InputOpener opener, ColumnsSchema schema,
            ReaderOptions options);
  // Files or directories. Errors: the schema's (ValidateColumns).
  static absl::StatusOr<std::unique_ptr<CsvReader>> Open(const std::vector<std::string>& paths,
                                                         ColumnsSchema schema,
                                                         ReaderOptions options);

  // A header that does not match the schema ends the read with
  // InvalidArgument naming the file (not a malformed line: no line of that
  // file can be read).
  absl::StatusOr<size_t> Read(size_t max_samples, SampleBlock* out) override;
  const MalformedLog& malformed() const override { return malformed_; }
  DataSchema schema() const override { return layout_; }
  // LineSource's position; Seek rereads the file's header.
  absl::StatusOr<std::vector<uint64_t>> Position() const override { return lines_.Position(); }
  absl::Status Seek(const std::vector<uint64_t>& position) override;

 private:
  ColumnsSchema schema_;
  DataSchema layout_;
  ReaderOptions options_;
  LineSource lines_;
  MalformedLog malformed_;
  FieldMap map_;
  std::vector<absl::string_view> fields_;
  std::string scratch_;
};

}  // namespace herald::data
