#include "common/data/column_schema.h"

#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace herald::data {

DataSchema ColumnsSchema::Layout() const {
  DataSchema layout{0, 0, 0};
  for (const ColumnSchema& c : columns) {
    if (c.role == ColumnRole::kLabel) ++layout.num_labels;
    if (c.role == ColumnRole::kDense) ++layout.num_dense;
    if (c.role == ColumnRole::kSparse) ++layout.num_sparse;
    if (c.role == ColumnRole::kSparse && c.weight_separator != 0) layout.weighted = true;
  }
  return layout;
}

std::vector<const ColumnSchema*> ColumnsSchema::OfRole(ColumnRole role) const {
  std::vector<const ColumnSchema*> out;
  for (const ColumnSchema& c : columns) {
    if (c.role == role) out.push_back(&c);
  }
  return out;
}

namespace {
const std::string& TableOf(const ColumnSchema& c) { return c.table.empty() ? c.name : c.table; }
}  // namespace

std::vector<std::string> ColumnsSchema::Tables() const {
  std::vector<std::string> tables;
  absl::flat_hash_set<std::string> seen;
  for (const ColumnSchema* c : OfRole(ColumnRole::kSparse)) {
    if (seen.insert(TableOf(*c)).second) tables.push_back(TableOf(*c));
  }
  return tables;
}

std::vector<uint32_t> ColumnsSchema::FeatureTables() const {
  absl::flat_hash_map<std::string, uint32_t> index;
  std::vector<uint32_t> out;
  for (const ColumnSchema* c : OfRole(ColumnRole::kSparse)) {
    auto [it, added] = index.emplace(TableOf(*c), static_cast<uint32_t>(index.size()));
    out.push_back(it->second);
  }
  return out;
}

ColumnsSchema CriteoColumns(uint32_t num_dense, uint32_t num_sparse) {
  ColumnsSchema s;
  s.separator = '\t';
  s.header = false;
  ColumnSchema label;
  label.name = "label";
  label.role = ColumnRole::kLabel;
  s.columns.push_back(label);
  for (uint32_t i = 0; i < num_dense; ++i) {
    ColumnSchema c;
    c.name = absl::StrCat("I", i + 1);
    c.role = ColumnRole::kDense;
    c.transform = DenseTransform::kLog1p;
    s.columns.push_back(c);
  }
  for (uint32_t i = 0; i < num_sparse; ++i) {
    ColumnSchema c;
    c.name = absl::StrCat("C", i + 1);
    c.role = ColumnRole::kSparse;
    c.ids = IdFormat::kHex;
    c.multi_hot_separator = ',';
    s.columns.push_back(c);
  }
  return s;
}

absl::Status ValidateColumns(const ColumnsSchema& schema) {
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < schema.columns.size(); ++i) {
    const ColumnSchema& c = schema.columns[i];
    auto bad = [&](auto... why) {
      return absl::InvalidArgumentError(
          absl::StrCat("data.schema.columns[", i, "] '", c.name, "': ", why...));
    };
    if (c.name.empty()) return bad("has no name");
    if (c.name.size() > 1024 || c.table.size() > 1024) return bad("a name longer than 1024 bytes");
    if (!names.insert(c.name).second) return bad("a second column of that name");
    if (c.role == ColumnRole::kDense) {
      if (!std::isfinite(c.scale) || !std::isfinite(c.shift) || !std::isfinite(c.missing_value)) {
        return bad("scale, shift and missing must be finite numbers");
      }
      if (c.transform == DenseTransform::kAffine && c.scale == 0.0f) {
        return bad("scale 0 makes every value the same");
      }
    }
    if (c.role == ColumnRole::kSparse && c.multi_hot_separator != 0 &&
        c.multi_hot_separator == schema.separator) {
      return bad("its multi-hot separator is the column separator");
    }
    if (c.max_ids != 0) {
      if (c.role != ColumnRole::kSparse || c.multi_hot_separator == 0) {
        return bad("max_ids on a column that is not multi-hot (it holds one id at most)");
      }
      if (c.max_ids > kMaxIdsPerValue) {
        return bad("max_ids ", c.max_ids, " is over ", kMaxIdsPerValue);
      }
    }
    if (c.weight_separator != 0) {
      if (c.role != ColumnRole::kSparse) return bad("a weight separator on a column not sparse");
      if (c.weight_separator == schema.separator || c.weight_separator == c.multi_hot_separator) {
        return bad("its weight separator is also its column or multi-hot separator");
      }
    }
  }
  const DataSchema layout = schema.Layout();
  if (layout.num_labels == 0) return absl::InvalidArgumentError("data.schema: no label column");
  if (layout.num_labels > kMaxLabels) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.schema: ", layout.num_labels, " label columns; at most ", kMaxLabels));
  }
  if (layout.num_dense > DataSchema::kMaxDense) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data.schema: ", layout.num_dense, " dense columns; at most ", DataSchema::kMaxDense));
  }
  if (layout.num_sparse > DataSchema::kMaxSparse) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data.schema: ", layout.num_sparse, " sparse columns; at most ", DataSchema::kMaxSparse));
  }
  if (schema.separator == 0 || schema.separator == '\n' || schema.separator == '"') {
    return absl::InvalidArgumentError("data.schema.separator: not a usable column separator");
  }
  return absl::OkStatus();
}

}  // namespace herald::data
