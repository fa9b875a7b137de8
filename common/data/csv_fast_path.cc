#include "common/data/csv_fast_path.h"

#include <cstring>

#include "common/data/number_parsing.h"
#include "common/data/string_key.h"

namespace herald::data {
namespace {

// The line being read: `p` moves over it.
struct Cursor {
  const char* p;
  const char* end;
  char separator;
  // True at the end of the current field (its separator or the line's end).
  bool AtFieldEnd() const { return p == end || *p == separator; }
  void SkipField() {
    while (!AtFieldEnd()) ++p;
  }
};

// A plain decimal up to the field's end, as ParseFiniteFloat reads it;
// integers of at most 15 digits are read in the same pass.
bool FastNumber(Cursor* c, float* out) {
  const char* begin = c->p;
  const bool negative = !c->AtFieldEnd() && *c->p == '-';
  if (negative) ++c->p;
  uint64_t m = 0;
  while (!c->AtFieldEnd() && static_cast<unsigned>(*c->p - '0') < 10) m = m * 10 + (*c->p++ - '0');
  const ptrdiff_t digits = c->p - begin - negative;
  if (c->AtFieldEnd() && digits > 0 && digits <= 15) {
    const double v = static_cast<double>(m);
    *out = static_cast<float>(negative ? -v : v);
    return true;
  }
  while (!c->AtFieldEnd()) {
    const char ch = *c->p;
    // Only plain decimals: anything else (exponents, "inf") is the slow path's.
    if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == '-')) return false;
    ++c->p;
  }
  return c->p != begin && ParseFiniteFloat(absl::string_view(begin, c->p - begin), out);
}

// The ids of one sparse field up to its end, into `keys`.
bool FastIds(Cursor* c, IdFormat ids, char multi, uint32_t max_ids, std::vector<uint64_t>* keys) {
  if (c->AtFieldEnd()) return true;  // missing: no key
  for (size_t count = 0;; ++count) {
    if (count == max_ids) return false;  // the slow path names the error
    const char* begin = c->p;
    uint64_t key = 0;
    switch (ids) {
      case IdFormat::kHex: {
        uint8_t d;
        while (c->p != c->end && (d = kHex.v[static_cast<uint8_t>(*c->p)]) != 0xFF) {
          key = (key << 4) | d;
          ++c->p;
        }
        if (c->p == begin || c->p - begin > 16) return false;
        break;
      }
      case IdFormat::kDecimal: {
        while (c->p != c->end && *c->p >= '0' && *c->p <= '9') key = key * 10 + (*c->p++ - '0');
        if (c->p == begin || c->p - begin > 19) return false;  // 20 digits may overflow
        break;
      }
      case IdFormat::kString: {
        while (!c->AtFieldEnd() && (multi == 0 || *c->p != multi)) ++c->p;
        if (c->p == begin) return false;
        key = StringKey(absl::string_view(begin, c->p - begin));
        break;
      }
    }
    keys->push_back(key);
    if (c->AtFieldEnd()) return true;
    if (multi == 0 || *c->p != multi) return false;
    ++c->p;  // past the multi-hot separator: another id must follow
  }
}

// Characters a number or a hex or decimal id may hold, and the quote.
bool NumberOrIdChar(char ch) {
  return kHex.v[static_cast<uint8_t>(ch)] != 0xFF || ch == '.' || ch == '-' || ch == '"';
}

}  // namespace

CsvFastPath::CsvFastPath(const ColumnsSchema& schema, const FieldMap& map)
    : applies_(!NumberOrIdChar(schema.separator) && schema.separator != '\r' &&
               !schema.Layout().weighted),
      separator_(schema.separator),
      layout_(schema.Layout()) {
  for (const int column : map.column_of_field) {
    Field f{ColumnRole::kIgnore, false, IdFormat::kHex, 0, kMaxIdsPerValue, 0, 0.0f};
    if (column >= 0) {
      const ColumnSchema& c = schema.columns[column];
      f = Field{c.role,
                c.label == LabelKind::kBinary,
                c.ids,
                c.role == ColumnRole::kSparse ? c.multi_hot_separator : '\0',
                c.max_ids != 0 ? c.max_ids : kMaxIdsPerValue,
                map.slot_of_column[column],
                c.missing_value};
      if (f.multi_hot_separator != 0 && NumberOrIdChar(f.multi_hot_separator)) applies_ = false;
    }
    if (f.role == ColumnRole::kSparse && f.slot != sparse_seen_++) sparse_in_order_ = false;
    fields_.push_back(f);
  }
}

bool CsvFastPath::Parse(absl::string_view line, SampleBlock* out) {
  if (!applies_) return false;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (std::memchr(line.data(), '"', line.size()) != nullptr) return false;
  const size_t labels0 = out->labels.size(), dense0 = out->dense.size();
  out->labels.resize(labels0 + layout_.num_labels);
  out->dense.resize(dense0 + layout_.num_dense);
  float* labels = out->labels.data() + labels0;
  float* dense = out->dense.data() + dense0;
  const size_t keys0 = out->keys.size(), offsets0 = out->offsets.size();
  const size_t missing0 = out->dense_missing.size();
  out->dense_missing.resize(missing0 + layout_.missing_words(), 0);
  uint32_t* missing = out->dense_missing.data() + missing0;
  // Keys go straight to the block when the file has the features in
  // their order, else through keys_ to be put in order.
  std::vector<uint64_t>* keys = sparse_in_order_ ? &out->keys : &keys_;
  if (!sparse_in_order_) {
    keys_.clear();
    feature_keys_.assign(layout_.num_sparse, {0, 0});
  }

  Cursor c{line.data(), line.data() + line.size(), separator_};
  bool ok = true;
  for (size_t i = 0; ok && i < fields_.size(); ++i) {
    if (i > 0) {
      if (c.p == c.end) {
        ok = false;  // too few fields
        break;
      }
      ++c.p;  // past the separator
    }
    const Field& f = fields_[i];
    switch (f.role) {
      case ColumnRole::kSparse: {
        const uint32_t begin = static_cast<uint32_t>(keys->size());
        ok = FastIds(&c, f.ids, f.multi_hot_separator, f.max_ids, keys);
        if (sparse_in_order_) {
          out->offsets.push_back(static_cast<uint32_t>(keys->size()));
        } else {
          feature_keys_[f.slot] = {begin, static_cast<uint32_t>(keys->size())};
        }
        break;
      }
      case ColumnRole::kDense:
        if (c.AtFieldEnd()) {
          dense[f.slot] = f.missing_value;
          missing[f.slot / 32] |= 1u << (f.slot % 32);
        } else {
          ok = FastNumber(&c, &dense[f.slot]);
        }
        break;
      case ColumnRole::kLabel: {
        float& y = labels[f.slot];
        ok = FastNumber(&c, &y) && (!f.binary_label || (y >= 0.0f && y <= 1.0f));
        break;
      }
      case ColumnRole::kIgnore:
        c.SkipField();
        break;
    }
  }
  if (!ok || c.p != c.end) {  // a bad or unusual value, or too many fields
    out->labels.resize(labels0);
    out->dense.resize(dense0);
    out->keys.resize(keys0);
    out->offsets.resize(offsets0);
    out->dense_missing.resize(missing0);
    return false;
  }
  if (sparse_in_order_) return true;
  for (const auto& [begin, end] : feature_keys_) {
    out->keys.insert(out->keys.end(), keys_.begin() + begin, keys_.begin() + end);
    out->offsets.push_back(static_cast<uint32_t>(out->keys.size()));
  }
  return true;
}

}  // namespace herald::data
