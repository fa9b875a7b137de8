#pragma once
// A job spec's data.schema as the readers' column schema, and the spec
// resolved against it: its tables in the features' order and num_dense
// from the schema's dense columns.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/column_schema.h"
#include "proto/job.pb.h"

namespace herald::scheduler {

// data.schema's columns. Errors: InvalidArgument naming the field
// (data.schema.columns[i].role, .multi_hot_separator, data.schema.separator)
// and ValidateColumns's.
absl::StatusOr<data::ColumnsSchema> ColumnsFromSpec(const proto::DataSchemaSpec& schema);

// Each sparse feature's table (an index into spec.tables): with a schema
// (resolved) its column's table, else feature t is table t.
std::vector<uint32_t> FeatureTablesOf(const proto::JobSpec& spec);

// The spec of a column schema: ColumnsFromSpec(SpecFromColumns(c))
// encodes as c does.
proto::DataSchemaSpec SpecFromColumns(const data::ColumnsSchema& columns);

// At submit: first reads data.schema_file (an absolute path here;
// schema_file.h). For a spec whose data.format is CSV: refuses num_dense beside
// a schema, a sparse column whose table is not in `tables` and a table no
// column uses, each naming the field; then orders `tables` as the sparse
// columns first name them (several features may share one table)
// and sets num_dense from the schema, so everything downstream reads the
// spec as today. Binary data: a version 2 file's stored schema becomes
// data.schema (a schema given must equal it; version 1 takes none), then
// as CSV. Other formats: refuses a schema (it would be ignored).
absl::Status ResolveDataSchema(proto::JobSpec* spec);

}  // namespace herald::scheduler
