#include "scheduler/data/data_schema_spec.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/data/binary_format.h"
#include "common/data/columns_codec.h"
#include "common/data/input_stream.h"
#include "common/status.h"
#include "scheduler/data/schema_file.h"

namespace herald::scheduler {
namespace {

absl::StatusOr<char> OneCharacter(const std::string& text, char empty, const std::string& field) {
  if (text.empty()) return empty;
  if (text.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": \"", text, "\" is not one character"));
  }
  return text[0];
}

}  // namespace

absl::StatusOr<data::ColumnsSchema> ColumnsFromSpec(const proto::DataSchemaSpec& spec) {
  data::ColumnsSchema out;
  HERALD_ASSIGN_OR_RETURN(out.separator,
                          OneCharacter(spec.separator(), ',', "data.schema.separator"));
  out.header = !spec.no_header();
  out.ignore_other_columns = spec.ignore_other_columns();
  for (int i = 0; i < spec.columns_size(); ++i) {
    const proto::ColumnSpec& c = spec.columns(i);
    const std::string field = absl::StrCat("data.schema.columns[", i, "]");
    data::ColumnSchema col;
    col.name = c.name();
    switch (c.role()) {
      case proto::COLUMN_LABEL:
        col.role = data::ColumnRole::kLabel;
        break;
      case proto::COLUMN_DENSE:
        col.role = data::ColumnRole::kDense;
        break;
      case proto::COLUMN_SPARSE:
        col.role = data::ColumnRole::kSparse;
        break;
      case proto::COLUMN_IGNORE:
        col.role = data::ColumnRole::kIgnore;
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".role: '", c.name(), "' needs a role (LABEL, DENSE, SPARSE or IGNORE)"));
    }
    col.label = c.label() == proto::LABEL_REGRESSION ? data::LabelKind::kRegression
                                                     : data::LabelKind::kBinary;
    switch (c.transform()) {
      case proto::TRANSFORM_LOG1P:
        col.transform = data::DenseTransform::kLog1p;
        break;
      case proto::TRANSFORM_AFFINE:
        col.transform = data::DenseTransform::kAffine;
        break;
      default:
        col.transform = data::DenseTransform::kNone;
        break;
    }
    col.scale = c.scale() == 0.0f ? 1.0f : c.scale();
    col.shift = c.shift();
    col.missing_value = c.missing();
    switch (c.ids()) {
      case proto::IDS_DECIMAL:
        col.ids = data::IdFormat::kDecimal;
        break;
      case proto::IDS_STRING:
        col.ids = data::IdFormat::kString;
        break;
      default:
        col.ids = data::IdFormat::kHex;
        break;
    }
    HERALD_ASSIGN_OR_RETURN(col.multi_hot_separator, OneCharacter(c.multi_hot_separator(), 0,
                                                                  field + ".multi_hot_separator"));
    HERALD_ASSIGN_OR_RETURN(col.weight_separator,
                            OneCharacter(c.weight_separator(), 0, field + ".weight_separator"));
    col.table = c.table();
    col.max_ids = c.max_ids();
    if (c.has_pooling()) {
      if (c.role() != proto::COLUMN_SPARSE) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".pooling: only a SPARSE column is pooled"));
      }
      if (!proto::PoolingKind_IsValid(c.pooling())) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".pooling: unknown kind ", static_cast<int>(c.pooling())));
      }
      col.pooling = static_cast<data::FeaturePooling>(1 + static_cast<int>(c.pooling()));
    }
    out.columns.push_back(std::move(col));
  }
  HERALD_RETURN_IF_ERROR(data::ValidateColumns(out));
  return out;
}

proto::DataSchemaSpec SpecFromColumns(const data::ColumnsSchema& columns) {
  proto::DataSchemaSpec spec;
  spec.set_separator(std::string(1, columns.separator));
  spec.set_no_header(!columns.header);
  spec.set_ignore_other_columns(columns.ignore_other_columns);
  for (const data::ColumnSchema& c : columns.columns) {
    proto::ColumnSpec* out = spec.add_columns();
    out->set_name(c.name);
    static constexpr proto::ColumnRole kRoles[] = {proto::COLUMN_LABEL, proto::COLUMN_DENSE,
                                                   proto::COLUMN_SPARSE, proto::COLUMN_IGNORE};
    out->set_role(kRoles[static_cast<int>(c.role)]);
    out->set_label(c.label == data::LabelKind::kRegression ? proto::LABEL_REGRESSION
                                                           : proto::LABEL_BINARY);
    static constexpr proto::DenseTransformKind kTransforms[] = {
        proto::TRANSFORM_NONE, proto::TRANSFORM_LOG1P, proto::TRANSFORM_AFFINE};
    out->set_transform(kTransforms[static_cast<int>(c.transform)]);
    out->set_scale(c.scale);
    out->set_shift(c.shift);
    out->set_missing(c.missing_value);
    static constexpr proto::IdFormat kIds[] = {proto::IDS_HEX, proto::IDS_DECIMAL,
                                               proto::IDS_STRING};
    out->set_ids(kIds[static_cast<int>(c.ids)]);
    if (c.multi_hot_separator != 0)
      out->set_multi_hot_separator(std::string(1, c.multi_hot_separator));
    if (c.weight_separator != 0) out->set_weight_separator(std::string(1, c.weight_separator));
    out->set_table(c.table);
    out->set_max_ids(c.max_ids);
    if (c.pooling != data::FeaturePooling::kTable) {
      out->set_pooling(static_cast<proto::PoolingKind>(static_cast<int>(c.pooling) - 1));
    }
  }
  return spec;
}

namespace {

// A binary data source: a version 2 file's stored schema becomes
// data.schema (or must equal the one given); version 1 takes none.
absl::Status ResolveBinarySchema(proto::DataSpec* data) {
  std::vector<std::string> paths(data->paths().begin(), data->paths().end());
  absl::StatusOr<std::vector<std::string>> files = data::ExpandInputPaths(paths);
  if (!files.ok()) return absl::OkStatus();  // the job's start names what is missing
  absl::StatusOr<data::BinaryHeader> header = data::ReadBinaryHeader(files->front());
  if (!header.ok()) return absl::OkStatus();
  if (header->columns == nullptr) {
    if (!data->has_schema()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("data.schema: ", files->front(),
                     " is binary format version 1 (Criteo's layout), which takes no schema"));
  }
  if (!data->has_schema()) {
    *data->mutable_schema() = SpecFromColumns(*header->columns);
    return absl::OkStatus();
  }
  HERALD_ASSIGN_OR_RETURN(const data::ColumnsSchema given, ColumnsFromSpec(data->schema()));
  if (!data::SameColumns(given, *header->columns)) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.schema: differs from the schema stored in ", files->front(),
                     " (binary format version 2 carries its own; remove data.schema to use it)"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<uint32_t> FeatureTablesOf(const proto::JobSpec& spec) {
  std::vector<uint32_t> tables(spec.tables_size());
  for (size_t t = 0; t < tables.size(); ++t) tables[t] = static_cast<uint32_t>(t);
  if (!spec.data().has_schema()) return tables;
  absl::StatusOr<data::ColumnsSchema> columns = ColumnsFromSpec(spec.data().schema());
  return columns.ok() ? columns->FeatureTables() : tables;
}

absl::Status ResolveDataSchema(proto::JobSpec* spec) {
  HERALD_RETURN_IF_ERROR(InlineSchemaFile(spec, /*base_dir=*/""));
  proto::DataSpec* data = spec->mutable_data();
  if (data->format() == proto::DATA_FORMAT_HERALD_BINARY) {
    HERALD_RETURN_IF_ERROR(ResolveBinarySchema(data));
    if (!data->has_schema()) return absl::OkStatus();
  } else if (data->format() != proto::DATA_FORMAT_CSV) {
    if (data->has_schema()) {
      return absl::InvalidArgumentError(
          "data.schema: only data.format CSV and binary version 2 read a schema (Criteo TSV and "
          "generated data have their own)");
    }
    return absl::OkStatus();
  }
  if (spec->num_dense() != 0) {
    return absl::InvalidArgumentError(
        "num_dense and data.schema: a spec with a schema takes its dense features from the "
        "schema's DENSE columns; remove num_dense");
  }
  HERALD_ASSIGN_OR_RETURN(const data::ColumnsSchema columns, ColumnsFromSpec(data->schema()));
  absl::flat_hash_map<std::string, int> table_index;
  for (int t = 0; t < spec->tables_size(); ++t) {
    if (!table_index.emplace(spec->tables(t).name(), t).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("tables[", t, "].name: '", spec->tables(t).name(), "' is named twice"));
    }
  }
  // Several features may look up one table (their rows shared); the
  // tables go in the order the features first name them.
  for (const data::ColumnSchema* c : columns.OfRole(data::ColumnRole::kSparse)) {
    const std::string& table = c->table.empty() ? c->name : c->table;
    if (!table_index.contains(table)) {
      return absl::InvalidArgumentError(absl::StrCat("data.schema: column '", c->name,
                                                     "' looks up table '", table,
                                                     "', which tables[] does not name"));
    }
  }
  std::vector<proto::TableSpec> ordered;
  const std::vector<std::string> used = columns.Tables();
  const absl::flat_hash_set<std::string> used_set(used.begin(), used.end());
  for (const std::string& name : used) ordered.push_back(spec->tables(table_index.at(name)));
  for (const proto::TableSpec& t : spec->tables()) {
    if (!used_set.contains(t.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("tables: '", t.name(), "' is looked up by no SPARSE column of data.schema"));
    }
  }
  spec->clear_tables();
  for (proto::TableSpec& t : ordered) *spec->add_tables() = std::move(t);
  spec->set_num_dense(columns.Layout().num_dense);
  return absl::OkStatus();
}

}  // namespace herald::scheduler
