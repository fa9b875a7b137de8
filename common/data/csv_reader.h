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
#include "common/data/csv_fast_path.h"
#include "common/data/csv_fields.h"
#include "common/data/input_stream.h"
#include "common/data/line_source.h"
#include "common/data/reader.h"

namespace herald::data {

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
  const ColumnsSchema* columns() const override { return &schema_; }
  // Every string id of the lines read from now on goes to `observer`
  // (`heraldctl data stats` counts collisions with it). Reading is slower
  // with one: every line takes the validating parser.
  void ObserveStringIds(StringIdObserver observer) { observer_ = std::move(observer); }
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
  CsvFastPath fast_;  // for map_
  StringIdObserver observer_;
};

}  // namespace herald::data
