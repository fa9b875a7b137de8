#include "common/data/csv_reader.h"

#include "common/status.h"

namespace herald::data {

CsvReader::CsvReader(std::vector<std::string> names, InputOpener opener, ColumnsSchema schema,
                     ReaderOptions options)
    : schema_(std::move(schema)),
      layout_(schema_.Layout()),
      options_(options),
      lines_(std::move(names), std::move(opener), options.buffer_bytes, "CSV reader"),
      malformed_(options.max_malformed_kept),
      map_(SchemaOrder(schema_)),
      fast_(schema_, map_) {}

absl::StatusOr<std::unique_ptr<CsvReader>> CsvReader::Open(const std::vector<std::string>& paths,
                                                           ColumnsSchema schema,
                                                           ReaderOptions options) {
  HERALD_RETURN_IF_ERROR(ValidateColumns(schema));
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputPaths(paths));
  InputOpener opener = FileOpener(files);
  return std::make_unique<CsvReader>(std::move(files), std::move(opener), std::move(schema),
                                     options);
}

absl::Status CsvReader::Seek(const std::vector<uint64_t>& position) {
  HERALD_RETURN_IF_ERROR(lines_.Seek(position));
  // Inside a file past its header: that file's header maps its fields.
  if (schema_.header && position.size() == 4 && position[3] > 0) {
    const size_t input = position[1];
    HERALD_ASSIGN_OR_RETURN(std::string header, lines_.FirstLine(input));
    HERALD_ASSIGN_OR_RETURN(map_, MapHeader(schema_, header, lines_.input_name(input)));
    fast_ = CsvFastPath(schema_, map_);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> CsvReader::Read(size_t max_samples, SampleBlock* out) {
  if (!(out->schema == layout_)) {
    return absl::InvalidArgumentError("sample block layout differs from the reader's schema");
  }
  size_t appended = 0;
  absl::string_view line;
  while (appended < max_samples) {
    HERALD_ASSIGN_OR_RETURN(bool more, lines_.Next(&line));
    if (!more) break;
    if (schema_.header && lines_.line_number() == 1) {
      HERALD_ASSIGN_OR_RETURN(map_, MapHeader(schema_, line, lines_.name()));
      fast_ = CsvFastPath(schema_, map_);
      continue;
    }
    if (!observer_ && fast_.Parse(line, out)) {
      ++appended;
      continue;
    }
    absl::Status s = SplitFields(line, schema_.separator, &fields_, &scratch_);
    if (s.ok()) s = ParseFields(schema_, map_, fields_, out, observer_ ? &observer_ : nullptr);
    if (s.ok()) {
      ++appended;
      continue;
    }
    HERALD_RETURN_IF_ERROR(
        RejectLine(options_.on_malformed, lines_.name(), lines_.line_number(), s, &malformed_));
  }
  return appended;
}

}  // namespace herald::data
