#pragma once
// Synthetic delimited text for any column schema (`heraldctl gen-data
// --schema`): rows a CsvReader with that schema reads back without a
// malformed line. Each row is a pure function of (seed, row index), so
// rows can be made in any order and on any number of threads.
//
// Per sparse column: ids drawn Zipf(1.1) over `cardinality` values, written
// in the column's format (hex, decimal, or "<column>-<n>" strings), 1-3 ids
// joined by the multi-hot separator where it has one; missing with
// probability `missing_rate`. Per dense column: a standard normal value
// scaled by (column index + 1), missing with `missing_rate`. Labels follow
// a hidden teacher: logit = Σ w(column, id) + Σ v(column) · dense, with w
// and v fixed by the seed; a binary label is Bernoulli(sigmoid(logit)), a
// regression label the logit plus N(0, 0.1) noise. Ignored columns hold a
// short word.

#include <cstdint>
#include <string>

#include "common/data/column_schema.h"

namespace herald::data {

struct SchemaGeneratorOptions {
  uint64_t seed = 1;
  uint64_t cardinality = 1000;  // distinct ids per sparse column
  double missing_rate = 0.1;    // of dense and sparse values
};

class SchemaGenerator {
 public:
  // REQUIRES: ValidateColumns(schema) is OK; cardinality ≥ 1.
  SchemaGenerator(ColumnsSchema schema, SchemaGeneratorOptions options);
  // The column names, in schema order, joined by the separator (no '\n').
  std::string Header() const;
  // Row `row` in schema order, without '\n'.
  std::string Row(uint64_t row) const;

 private:
  ColumnsSchema schema_;
  SchemaGeneratorOptions options_;
};

}  // namespace herald::data
