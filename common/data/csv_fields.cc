#include "common/data/csv_fields.h"

#include <cmath>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/charconv.h"
#include "absl/strings/str_cat.h"
#include "common/data/number_parsing.h"
#include "common/data/string_key.h"
#include "common/status.h"

namespace herald::data {
namespace {

// Shows a bad field, shortened so error messages stay one readable line.
std::string Quote(absl::string_view field) {
  if (field.size() > 24) return absl::StrCat("'", field.substr(0, 24), "...'");
  return absl::StrCat("'", field, "'");
}

absl::Status ParseId(const ColumnSchema& c, absl::string_view id, uint64_t* key) {
  switch (c.ids) {
    case IdFormat::kHex:
      if (ParseHexId(id, key)) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat("not a hex id of 1-16 digits ", Quote(id)));
    case IdFormat::kDecimal:
      if (ParseDecimalId(id, key)) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("not an unsigned 64-bit decimal id ", Quote(id)));
    case IdFormat::kString:
      *key = StringKey(id);
      return absl::OkStatus();
  }
  return absl::InternalError("unknown id format");
}

// One line's values before they go into the block (so a bad line leaves
// the block unchanged).
std::vector<uint32_t> RoleSlots(const ColumnsSchema& schema) {
  std::vector<uint32_t> slot(schema.columns.size(), 0);
  uint32_t next[4] = {0, 0, 0, 0};
  for (size_t c = 0; c < schema.columns.size(); ++c) {
    slot[c] = next[static_cast<int>(schema.columns[c].role)]++;
  }
  return slot;
}

struct LineValues {
  std::vector<float> labels, dense;
  std::vector<uint32_t> missing;  // bit i % 32 of word i / 32: dense value i is missing
  std::vector<std::vector<uint64_t>> keys;
  std::vector<std::vector<float>> weights;  // with layout.weighted: each key's
  struct StringId {
    uint32_t feature;
    absl::string_view id;
    uint64_t key;
  };
  std::vector<StringId> string_ids;  // for the observer, once the line is good
};

}  // namespace

absl::Status SplitFields(absl::string_view line, char separator,
                         std::vector<absl::string_view>* fields, std::string* scratch) {
  fields->clear();
  scratch->clear();
  scratch->reserve(line.size());  // never reallocated below: views stay valid
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t i = 0;
  for (;;) {
    if (i < line.size() && line[i] == '"') {
      const size_t begin = scratch->size();
      size_t j = i + 1;
      for (;;) {
        if (j >= line.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("field ", fields->size() + 1, ": a quote is not closed"));
        }
        if (line[j] == '"') {
          if (j + 1 < line.size() && line[j + 1] == '"') {
            scratch->push_back('"');
            j += 2;
            continue;
          }
          break;
        }
        scratch->push_back(line[j++]);
      }
      fields->push_back(absl::string_view(scratch->data() + begin, scratch->size() - begin));
      i = j + 1;
      if (i == line.size()) return absl::OkStatus();
      if (line[i] != separator) {
        return absl::InvalidArgumentError(
            absl::StrCat("field ", fields->size(), ": text after its closing quote"));
      }
      ++i;
      continue;
    }
    const char* next = static_cast<const char*>(
        i < line.size() ? std::memchr(line.data() + i, separator, line.size() - i) : nullptr);
    const size_t end = next != nullptr ? static_cast<size_t>(next - line.data()) : line.size();
    fields->push_back(line.substr(i, end - i));
    if (next == nullptr) return absl::OkStatus();
    i = end + 1;
  }
}

absl::StatusOr<FieldMap> MapHeader(const ColumnsSchema& schema, absl::string_view header,
                                   const std::string& file) {
  std::vector<absl::string_view> names;
  std::string scratch;
  if (absl::Status s = SplitFields(header, schema.separator, &names, &scratch); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ":1: header: ", s.message()));
  }
  absl::flat_hash_map<std::string, int> column;
  for (size_t c = 0; c < schema.columns.size(); ++c) {
    column[schema.columns[c].name] = static_cast<int>(c);
  }
  FieldMap map;
  map.slot_of_column = RoleSlots(schema);
  std::vector<bool> found(schema.columns.size(), false);
  for (size_t f = 0; f < names.size(); ++f) {
    auto it = column.find(names[f]);
    if (it == column.end()) {
      if (!schema.ignore_other_columns) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ":1: header column ", f + 1, " ", Quote(names[f]),
                         " is not in the schema (name it with role ignore, or set "
                         "ignore_other_columns)"));
      }
      map.column_of_field.push_back(-1);
      continue;
    }
    if (found[it->second]) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":1: header names column ", Quote(names[f]), " twice"));
    }
    found[it->second] = true;
    const bool used = schema.columns[it->second].role != ColumnRole::kIgnore;
    map.column_of_field.push_back(used ? it->second : -1);
  }
  for (size_t c = 0; c < schema.columns.size(); ++c) {
    if (!found[c] && schema.columns[c].role != ColumnRole::kIgnore) {
      return absl::InvalidArgumentError(absl::StrCat(file, ":1: the header has no column ",
                                                     Quote(schema.columns[c].name), " (schema)"));
    }
  }
  return map;
}

FieldMap SchemaOrder(const ColumnsSchema& schema) {
  FieldMap map;
  map.slot_of_column = RoleSlots(schema);
  for (size_t c = 0; c < schema.columns.size(); ++c) {
    map.column_of_field.push_back(
        schema.columns[c].role == ColumnRole::kIgnore ? -1 : static_cast<int>(c));
  }
  return map;
}

absl::Status ParseFields(const ColumnsSchema& schema, const FieldMap& map,
                         const std::vector<absl::string_view>& fields, SampleBlock* out,
                         const StringIdObserver* observer) {
  if (fields.size() != map.column_of_field.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", map.column_of_field.size(), " fields, found ", fields.size()));
  }
  const DataSchema& layout = out->schema;
  const std::vector<uint32_t>& slot = map.slot_of_column;
  thread_local LineValues v;
  v.labels.assign(layout.num_labels, 0.0f);
  v.dense.assign(layout.num_dense, 0.0f);
  v.missing.assign(layout.missing_words(), 0);
  v.keys.resize(layout.num_sparse);
  for (auto& k : v.keys) k.clear();
  v.weights.resize(layout.num_sparse);
  for (auto& w : v.weights) w.clear();
  v.string_ids.clear();
  for (size_t f = 0; f < fields.size(); ++f) {
    const int c = map.column_of_field[f];
    if (c < 0) continue;
    const ColumnSchema& col = schema.columns[c];
    const absl::string_view value = fields[f];
    auto bad = [&](auto... why) {
      return absl::InvalidArgumentError(
          absl::StrCat("column '", col.name, "' (field ", f + 1, "): ", why...));
    };
    switch (col.role) {
      case ColumnRole::kLabel: {
        float x = 0;
        if (value.empty()) return bad("no label");
        if (!ParseFiniteFloat(value, &x)) return bad("not a finite number ", Quote(value));
        if (col.label == LabelKind::kBinary && !(x >= 0.0f && x <= 1.0f)) {
          return bad("binary label ", Quote(value), " is outside [0, 1]");
        }
        v.labels[slot[c]] = x;
        break;
      }
      case ColumnRole::kDense: {
        if (value.empty()) {
          v.dense[slot[c]] = col.missing_value;
          v.missing[slot[c] / 32] |= 1u << (slot[c] % 32);
        } else if (!ParseFiniteFloat(value, &v.dense[slot[c]])) {
          return bad("not a finite number ", Quote(value));
        }
        break;
      }
      case ColumnRole::kSparse: {
        if (value.empty()) break;
        std::vector<uint64_t>& keys = v.keys[slot[c]];
        size_t start = 0;
        for (;;) {
          size_t end = col.multi_hot_separator == 0 ? absl::string_view::npos
                                                    : value.find(col.multi_hot_separator, start);
          absl::string_view id = value.substr(
              start, end == absl::string_view::npos ? absl::string_view::npos : end - start);
          float weight = 1.0f;
          if (col.weight_separator != 0) {
            if (const size_t w = id.rfind(col.weight_separator); w != absl::string_view::npos) {
              if (!ParseFiniteFloat(id.substr(w + 1), &weight)) {
                return bad("not a finite weight ", Quote(id.substr(w + 1)), " in ", Quote(value));
              }
              id = id.substr(0, w);
            }
          }
          if (id.empty()) return bad("an empty id in ", Quote(value));
          uint64_t key = 0;
          if (absl::Status s = ParseId(col, id, &key); !s.ok()) return bad(s.message());
          if (const uint32_t most = col.max_ids != 0 ? col.max_ids : kMaxIdsPerValue;
              keys.size() == most) {
            return bad("more than ", most, " ids in one value",
                       col.max_ids != 0 ? " (its max_ids)" : "");
          }
          keys.push_back(key);
          if (layout.weighted) v.weights[slot[c]].push_back(weight);
          if (observer != nullptr && col.ids == IdFormat::kString) {
            v.string_ids.push_back({slot[c], id, key});
          }
          if (end == absl::string_view::npos) break;
          start = end + 1;
        }
        break;
      }
      case ColumnRole::kIgnore:
        break;
    }
  }
  out->labels.insert(out->labels.end(), v.labels.begin(), v.labels.end());
  out->dense.insert(out->dense.end(), v.dense.begin(), v.dense.end());
  out->dense_missing.insert(out->dense_missing.end(), v.missing.begin(), v.missing.end());
  for (size_t f = 0; f < v.keys.size(); ++f) {
    out->keys.insert(out->keys.end(), v.keys[f].begin(), v.keys[f].end());
    out->offsets.push_back(static_cast<uint32_t>(out->keys.size()));
    if (layout.weighted) {
      // A column without weights: each of its keys weighs 1.
      std::vector<float>& w = v.weights[f];
      w.resize(v.keys[f].size(), 1.0f);
      out->weights.insert(out->weights.end(), w.begin(), w.end());
    }
  }
  if (observer != nullptr) {
    for (const LineValues::StringId& id : v.string_ids) (*observer)(id.feature, id.id, id.key);
  }
  return absl::OkStatus();
}

}  // namespace herald::data
