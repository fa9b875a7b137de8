#include "common/data/criteo_tsv.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/charconv.h"
#include "absl/strings/str_cat.h"
#include "common/data/number_parsing.h"
#include "common/status.h"

namespace herald::data {
namespace {

inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Shows a bad field, shortened so error messages stay one readable line.
std::string Quote(absl::string_view field) {
  if (field.size() > 24) return absl::StrCat("'", field.substr(0, 24), "...'");
  return absl::StrCat("'", field, "'");
}

absl::Status ParseLabel(absl::string_view f, float* label) {
  if (f.size() == 1 && (f[0] == '0' || f[0] == '1')) {
    *label = static_cast<float>(f[0] - '0');
    return absl::OkStatus();
  }
  double v = 0;
  auto r = absl::from_chars(f.data(), f.data() + f.size(), v);
  if (f.empty() || r.ec != std::errc() || r.ptr != f.data() + f.size()) {
    return absl::InvalidArgumentError(absl::StrCat("label: not a number ", Quote(f)));
  }
  if (!(v >= 0.0 && v <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("label: ", Quote(f), " is outside [0, 1]"));
  }
  *label = static_cast<float>(v);
  return absl::OkStatus();
}

absl::Status ParseDense(absl::string_view f, uint32_t index, int32_t* value, bool* missing) {
  if (f.empty()) {
    *value = 0;
    *missing = true;
    return absl::OkStatus();
  }
  *missing = false;
  size_t i = 0;
  bool negative = false;
  if (f[0] == '-' || f[0] == '+') {
    negative = f[0] == '-';
    i = 1;
  }
  if (i == f.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense feature I", index + 1, ": not an integer ", Quote(f)));
  }
  int64_t v = 0;
  for (; i < f.size(); ++i) {
    unsigned d = static_cast<unsigned char>(f[i]) - '0';
    if (d > 9) {
      return absl::InvalidArgumentError(
          absl::StrCat("dense feature I", index + 1, ": not an integer ", Quote(f)));
    }
    v = v * 10 + d;
    if (v > static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1) break;
  }
  if (negative) v = -v;
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dense feature I", index + 1, ": ", Quote(f), " does not fit in int32"));
  }
  *value = static_cast<int32_t>(v);
  return absl::OkStatus();
}

// Appends the ids of one categorical field to `keys`.
absl::Status ParseCategorical(absl::string_view f, uint32_t index, std::vector<uint64_t>* keys) {
  size_t start = 0;
  while (start < f.size()) {
    size_t end = f.find(',', start);
    if (end == absl::string_view::npos) end = f.size();
    absl::string_view id = f.substr(start, end - start);
    if (id.empty() || id.size() > 16) {
      return absl::InvalidArgumentError(absl::StrCat("categorical feature C", index + 1,
                                                     ": not a hex id of 1-16 digits ", Quote(f)));
    }
    uint64_t v = 0;
    for (char c : id) {
      int h = HexValue(c);
      if (h < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("categorical feature C", index + 1, ": not a hex id ", Quote(id)));
      }
      v = (v << 4) | static_cast<uint64_t>(h);
    }
    keys->push_back(v);
    start = end + 1;
    if (end + 1 == f.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("categorical feature C", index + 1, ": trailing ',' in ", Quote(f)));
    }
  }
  return absl::OkStatus();
}

// Single-pass parser for the common shape of a line: label 0/1, unsigned
// decimal dense values (no sign), hex ids of 1-16 digits. Returns false,
// leaving `out` unchanged, for anything else; the validating parser then
// accepts the line or names what is wrong. Both give identical results on
// lines this one accepts (checked by the fuzz target).
bool FastParseCriteoLine(const char* p, const char* end, SampleBlock* out) {
  const DataSchema& schema = out->schema;
  if (end - p < 1 || (*p != '0' && *p != '1')) return false;
  const float label = static_cast<float>(*p - '0');
  ++p;
  int32_t dense[DataSchema::kMaxCriteoDense];
  uint32_t missing = 0;
  for (uint32_t i = 0; i < schema.num_dense; ++i) {
    if (p == end || *p != '\t') return false;
    ++p;
    if (p == end || *p == '\t') {
      dense[i] = 0;
      missing |= 1u << i;
      continue;
    }
    uint64_t v = 0;
    const char* start = p;
    while (p != end && static_cast<unsigned>(*p - '0') <= 9)
      v = v * 10 + static_cast<unsigned>(*p++ - '0');
    if (p == start || p - start > 9) return false;  // no digits, or may overflow int32
    dense[i] = static_cast<int32_t>(v);
  }
  const size_t keys_before = out->keys.size();
  const size_t offsets_before = out->offsets.size();
  for (uint32_t f = 0; f < schema.num_sparse; ++f) {
    if (p == end || *p != '\t') goto fail;
    ++p;
    while (p != end && *p != '\t') {
      uint64_t v = 0;
      const char* start = p;
      uint8_t h;
      while (p != end && (h = kHex.v[static_cast<uint8_t>(*p)]) != 0xFF) {
        v = (v << 4) | h;
        ++p;
      }
      if (p == start || p - start > 16) goto fail;
      out->keys.push_back(v);
      if (p != end && *p == ',') {
        ++p;
        if (p == end || *p == '\t') goto fail;  // trailing ','
      } else if (p != end && *p != '\t') {
        goto fail;
      }
    }
    out->offsets.push_back(static_cast<uint32_t>(out->keys.size()));
  }
  if (p != end) goto fail;
  out->labels.push_back(label);
  out->dense.insert(out->dense.end(), dense, dense + schema.num_dense);
  out->dense_missing.push_back(missing);
  return true;
fail:
  out->keys.resize(keys_before);
  out->offsets.resize(offsets_before);
  return false;
}

absl::Status ParseFieldByField(absl::string_view line, SampleBlock* out);

}  // namespace

absl::Status ParseCriteoLine(absl::string_view line, SampleBlock* out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (FastParseCriteoLine(line.data(), line.data() + line.size(), out)) return absl::OkStatus();
  return ParseFieldByField(line, out);
}

absl::Status ParseCriteoLineValidating(absl::string_view line, SampleBlock* out) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return ParseFieldByField(line, out);
}

namespace {
// REQUIRES: a trailing '\r' was already removed.
absl::Status ParseFieldByField(absl::string_view line, SampleBlock* out) {
  const DataSchema& schema = out->schema;
  const uint32_t want = 1 + schema.num_dense + schema.num_sparse;
  const size_t keys_before = out->keys.size();
  const size_t offsets_before = out->offsets.size();

  // Field boundaries, found with memchr.
  const char* p = line.data();
  const char* end = p + line.size();
  uint32_t field = 0;
  float label = 0;
  uint32_t missing_mask = 0;
  int32_t dense_values[DataSchema::kMaxCriteoDense];
  absl::Status status;
  while (true) {
    const char* tab = static_cast<const char*>(std::memchr(p, '\t', end - p));
    const char* fend = tab ? tab : end;
    absl::string_view f(p, fend - p);
    if (field >= want) {
      status = absl::InvalidArgumentError(absl::StrCat("expected ", want, " fields, found more"));
      break;
    }
    if (field == 0) {
      status = ParseLabel(f, &label);
    } else if (field <= schema.num_dense) {
      bool missing = false;
      status = ParseDense(f, field - 1, &dense_values[field - 1], &missing);
      if (missing) missing_mask |= 1u << (field - 1);
    } else {
      status = ParseCategorical(f, field - 1 - schema.num_dense, &out->keys);
      out->offsets.push_back(static_cast<uint32_t>(out->keys.size()));
    }
    if (!status.ok()) break;
    ++field;
    if (tab == nullptr) break;
    p = tab + 1;
  }
  if (status.ok() && field != want) {
    status = absl::InvalidArgumentError(absl::StrCat("expected ", want, " fields, found ", field));
  }
  if (!status.ok()) {
    out->keys.resize(keys_before);
    out->offsets.resize(offsets_before);
    return status;
  }
  out->labels.push_back(label);
  out->dense.insert(out->dense.end(), dense_values, dense_values + schema.num_dense);
  out->dense_missing.push_back(missing_mask);
  return absl::OkStatus();
}
}  // namespace

CriteoTsvReader::CriteoTsvReader(std::vector<std::string> names, InputOpener opener,
                                 ReaderOptions options)
    : options_(options),
      lines_(std::move(names), std::move(opener), options.buffer_bytes, "TSV reader"),
      malformed_(options.max_malformed_kept) {}

absl::StatusOr<std::unique_ptr<CriteoTsvReader>> CriteoTsvReader::Open(
    const std::vector<std::string>& paths, ReaderOptions options) {
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputPaths(paths));
  InputOpener opener = FileOpener(files);
  return std::make_unique<CriteoTsvReader>(std::move(files), std::move(opener), options);
}

absl::StatusOr<size_t> CriteoTsvReader::Read(size_t max_samples, SampleBlock* out) {
  if (!(out->schema == options_.schema)) {
    return absl::InvalidArgumentError("sample block schema differs from the reader's schema");
  }
  if (options_.schema.num_dense > DataSchema::kMaxCriteoDense || options_.schema.num_labels != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Criteo TSV holds one label and at most ", DataSchema::kMaxCriteoDense,
        " dense features; the reader was asked for ", options_.schema.num_labels, " and ",
        options_.schema.num_dense, " (describe other data with a schema, data-formats.md)"));
  }
  size_t appended = 0;
  absl::string_view line;
  while (appended < max_samples) {
    HERALD_ASSIGN_OR_RETURN(bool more, lines_.Next(&line));
    if (!more) break;
    absl::Status s = ParseCriteoLine(line, out);
    if (s.ok()) {
      ++appended;
      continue;
    }
    HERALD_RETURN_IF_ERROR(
        RejectLine(options_.on_malformed, lines_.name(), lines_.line_number(), s, &malformed_));
  }
  return appended;
}

namespace {
inline void AppendHex(uint64_t v, std::string* out) {
  static const char kDigits[] = "0123456789abcdef";
  char tmp[16];
  int n = 0;
  int min_digits = 8;  // Criteo writes 32-bit ids as 8 hex digits
  while (v != 0 || n < min_digits) {
    tmp[n++] = kDigits[v & 15];
    v >>= 4;
  }
  while (n > 0) out->push_back(tmp[--n]);
}
}  // namespace

void AppendCriteoLine(const SampleBlock& block, size_t s, std::string* out) {
  float label = block.Label(s);
  if (label == 0.0f || label == 1.0f) {
    out->push_back(label == 0.0f ? '0' : '1');
  } else {
    absl::StrAppend(out, label);
  }
  for (uint32_t i = 0; i < block.schema.num_dense; ++i) {
    out->push_back('\t');
    if (!block.DenseMissing(s, i)) absl::StrAppend(out, static_cast<int32_t>(block.Dense(s, i)));
  }
  for (uint32_t f = 0; f < block.schema.num_sparse; ++f) {
    out->push_back('\t');
    bool first = true;
    for (uint64_t k : block.Keys(s, f)) {
      if (!first) out->push_back(',');
      AppendHex(k, out);
      first = false;
    }
  }
  out->push_back('\n');
}

}  // namespace herald::data

namespace herald::data {

absl::StatusOr<std::unique_ptr<CriteoTsvWriter>> CriteoTsvWriter::Create(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return absl::UnavailableError(absl::StrCat("cannot create ", path));
  return std::unique_ptr<CriteoTsvWriter>(new CriteoTsvWriter(f, path));
}

CriteoTsvWriter::~CriteoTsvWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

absl::Status CriteoTsvWriter::Write(const SampleBlock& block) {
  if (f_ == nullptr) return absl::FailedPreconditionError("TSV writer is closed");
  if (block.schema.num_labels != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        path_, ": Criteo TSV holds one label per sample; the data has ", block.schema.num_labels));
  }
  for (size_t s = 0; s < block.size(); ++s) {
    for (uint32_t i = 0; i < block.schema.num_dense; ++i) {
      const float v = block.Dense(s, i);
      if (!block.DenseMissing(s, i) &&
          !(v == std::trunc(v) && v >= -2147483648.0f && v < 2147483648.0f)) {
        return absl::InvalidArgumentError(
            absl::StrCat(path_, ": Criteo TSV holds integer dense values; sample ", s, " has ", v,
                         " in dense feature ", i + 1));
      }
    }
  }
  buffer_.clear();
  for (size_t s = 0; s < block.size(); ++s) AppendCriteoLine(block, s, &buffer_);
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), f_) != buffer_.size()) {
    return absl::UnavailableError(absl::StrCat("write to ", path_, " failed"));
  }
  return absl::OkStatus();
}

absl::Status CriteoTsvWriter::Close() {
  if (f_ == nullptr) return absl::OkStatus();
  bool ok = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!ok) return absl::UnavailableError(absl::StrCat("closing ", path_, " failed"));
  return absl::OkStatus();
}

}  // namespace herald::data
