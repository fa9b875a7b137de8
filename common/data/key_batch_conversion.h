#pragma once
// data::SampleBlock -> KeyBatch: each dense value transformed as its
// column says (column_schema.h; Criteo's: log(1 + x) for x > 0 and 0
// otherwise, a missing value counting as 0), the first label, keys copied
// per table. The scheduler's data loader, the reference trainer and
// evaluation all convert here, so they see the same values.

#include "common/data/column_schema.h"
#include "common/data/key_batch.h"
#include "common/data/sample_block.h"

namespace herald::data {

// Criteo's transform of one raw value.
float TransformDense(float value);
// One column's transform of a raw value.
float TransformDense(const ColumnSchema& column, float value);

// `columns`: the data's schema (its dense columns' transforms; features
// that name one table go into that table, KeyBatch::Table::features), or
// null for Criteo's transform of every dense value, table f = feature f.
KeyBatch ToKeyBatch(const SampleBlock& block, size_t begin, size_t end,
                    const ColumnsSchema* columns = nullptr);
// The same into `out`, reusing its memory.
void ToKeyBatch(const SampleBlock& block, size_t begin, size_t end, KeyBatch* out,
                const ColumnsSchema* columns = nullptr);

}  // namespace herald::data
