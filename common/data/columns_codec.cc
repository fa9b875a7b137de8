#include "common/data/columns_codec.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/data/byte_order.h"
#include "common/status.h"

namespace herald::data {
namespace {

void PutText(std::string* out, const std::string& s) {
  Put<uint16_t>(out, static_cast<uint16_t>(s.size()));
  out->append(s);
}

// Reads fixed-size values and strings off the front of `rest`.
class Bytes {
 public:
  explicit Bytes(absl::string_view bytes) : rest_(bytes) {}
  template <typename T>
  bool Get(T* v) {
    if (rest_.size() < sizeof(T)) return false;
    std::memcpy(v, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return true;
  }
  bool GetText(std::string* s) {
    uint16_t n = 0;
    if (!Get(&n) || rest_.size() < n) return false;
    s->assign(rest_.data(), n);
    rest_.remove_prefix(n);
    return true;
  }
  size_t left() const { return rest_.size(); }

 private:
  absl::string_view rest_;
};

}  // namespace

std::string EncodeColumns(const ColumnsSchema& schema) {
  std::string out;
  Put<uint32_t>(&out, static_cast<uint32_t>(schema.columns.size()));
  Put<uint8_t>(&out, static_cast<uint8_t>(schema.separator));
  Put<uint8_t>(&out, schema.header ? 1 : 0);
  Put<uint8_t>(&out, schema.ignore_other_columns ? 1 : 0);
  Put<uint8_t>(&out, 0);
  for (const ColumnSchema& c : schema.columns) {
    Put<uint8_t>(&out, static_cast<uint8_t>(c.role));
    Put<uint8_t>(&out, static_cast<uint8_t>(c.label));
    Put<uint8_t>(&out, static_cast<uint8_t>(c.transform));
    Put<uint8_t>(&out, static_cast<uint8_t>(c.ids));
    Put<float>(&out, c.scale);
    Put<float>(&out, c.shift);
    Put<float>(&out, c.missing_value);
    Put<uint8_t>(&out, static_cast<uint8_t>(c.multi_hot_separator));
    Put<uint8_t>(&out, static_cast<uint8_t>(c.weight_separator));
    PutText(&out, c.name);
    PutText(&out, c.table);
  }
  // Each column's pooling, after the columns (a schema written before
  // pooling was stored ends with the last column: every feature's is its
  // table's).
  for (const ColumnSchema& c : schema.columns) Put<uint8_t>(&out, static_cast<uint8_t>(c.pooling));
  return out;
}

bool SameColumns(const ColumnsSchema& a, const ColumnsSchema& b) {
  auto columns_only = [](ColumnsSchema s) {
    s.separator = ',';
    s.header = true;
    s.ignore_other_columns = false;
    return EncodeColumns(s);
  };
  return columns_only(a) == columns_only(b);
}

absl::StatusOr<ColumnsSchema> DecodeColumns(absl::string_view bytes) {
  Bytes in(bytes);
  ColumnsSchema schema;
  uint32_t count = 0;
  uint8_t separator = 0, header = 0, ignore_other = 0, pad = 0;
  if (!in.Get(&count) || !in.Get(&separator) || !in.Get(&header) || !in.Get(&ignore_other) ||
      !in.Get(&pad)) {
    return absl::InvalidArgumentError("column schema: shorter than its fixed part");
  }
  // Each column takes at least 20 bytes: a count past that is corrupt.
  if (count > in.left() / 20) {
    return absl::InvalidArgumentError(
        absl::StrCat("column schema: ", count, " columns do not fit in ", in.left(), " bytes"));
  }
  schema.separator = static_cast<char>(separator);
  schema.header = header != 0;
  schema.ignore_other_columns = ignore_other != 0;
  for (uint32_t i = 0; i < count; ++i) {
    ColumnSchema c;
    uint8_t role, label, transform, ids, multi, weight;
    if (!in.Get(&role) || !in.Get(&label) || !in.Get(&transform) || !in.Get(&ids) ||
        !in.Get(&c.scale) || !in.Get(&c.shift) || !in.Get(&c.missing_value) || !in.Get(&multi) ||
        !in.Get(&weight) || !in.GetText(&c.name) || !in.GetText(&c.table)) {
      return absl::InvalidArgumentError(absl::StrCat("column schema: column ", i, " is cut short"));
    }
    if (role > static_cast<uint8_t>(ColumnRole::kIgnore) ||
        label > static_cast<uint8_t>(LabelKind::kRegression) ||
        transform > static_cast<uint8_t>(DenseTransform::kAffine) ||
        ids > static_cast<uint8_t>(IdFormat::kString)) {
      return absl::InvalidArgumentError(absl::StrCat("column schema: column ", i,
                                                     " has an unknown role, label, transform or id "
                                                     "format"));
    }
    c.role = static_cast<ColumnRole>(role);
    c.label = static_cast<LabelKind>(label);
    c.transform = static_cast<DenseTransform>(transform);
    c.ids = static_cast<IdFormat>(ids);
    c.multi_hot_separator = static_cast<char>(multi);
    c.weight_separator = static_cast<char>(weight);
    schema.columns.push_back(std::move(c));
  }
  if (in.left() >= count) {
    for (ColumnSchema& c : schema.columns) {
      uint8_t pooling = 0;
      in.Get(&pooling);
      if (pooling > static_cast<uint8_t>(FeaturePooling::kSqrtN)) {
        return absl::InvalidArgumentError(
            absl::StrCat("column schema: column '", c.name, "' has an unknown pooling"));
      }
      c.pooling = static_cast<FeaturePooling>(pooling);
    }
  }
  if (in.left() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("column schema: ", in.left(), " bytes after the last column"));
  }
  HERALD_RETURN_IF_ERROR(ValidateColumns(schema));
  return schema;
}

}  // namespace herald::data
