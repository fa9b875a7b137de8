#pragma once
// What each column of a data file is, and how a line's fields become a
// sample's labels, dense values and sparse keys (docs/data-formats.md,
// "Schemas"). The Criteo layout is one preset of it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/schema.h"

namespace herald::data {

enum class ColumnRole { kLabel, kDense, kSparse, kIgnore };
// Binary: a number in [0, 1]. Regression: any finite number.
enum class LabelKind { kBinary, kRegression };
// The value the model sees: x (none), Criteo's log1p(x) for x > 0 and 0
// otherwise, or x * scale + shift.
enum class DenseTransform { kNone, kLog1p, kAffine };
// How an id is written: hexadecimal (1-16 digits), decimal (an unsigned
// 64-bit number) or any string (hashed to a key, string_key.h).
enum class IdFormat { kHex, kDecimal, kString };
// How a sparse feature's ids are pooled: as its table says, or its own
// (the job spec's ColumnSpec.pooling; the model reads it, the data
// formats keep it with the schema).
enum class FeaturePooling : uint8_t { kTable, kSum, kMean, kSqrtN };

struct ColumnSchema {
  std::string name;
  ColumnRole role = ColumnRole::kIgnore;
  LabelKind label = LabelKind::kBinary;              // kLabel
  DenseTransform transform = DenseTransform::kNone;  // kDense
  float scale = 1.0f, shift = 0.0f;                  // kDense, kAffine
  float missing_value = 0.0f;                        // kDense: the raw value of an empty field
  IdFormat ids = IdFormat::kHex;                     // kSparse
  char multi_hot_separator = 0;                      // kSparse: 0 = one id per field
  // kSparse: per-id weights, written after the id and this character
  // ("comedy:0.5"); an id without one weighs 1. 0: no weights.
  char weight_separator = 0;
  FeaturePooling pooling = FeaturePooling::kTable;  // kSparse
  // kSparse, multi-hot: at most this many ids in one value (0:
  // kMaxIdsPerValue); a value with more is malformed. Not stored by the
  // binary format.
  uint32_t max_ids = 0;
  // kSparse: the embedding table the feature looks up (its own name when
  // empty). Features that name one table share its rows.
  std::string table;
};

// Limits: what the formats and the planner hold.
inline constexpr uint32_t kMaxLabels = 16;
inline constexpr uint32_t kMaxIdsPerValue = 65536;

struct ColumnsSchema {
  // In file order when the file has no header; matched by name otherwise.
  std::vector<ColumnSchema> columns;
  char separator = ',';
  // The first line of every file names the columns (any order).
  bool header = true;
  // With a header: columns the schema does not name are skipped, not an
  // error.
  bool ignore_other_columns = false;

  // Counts of labels, dense and sparse columns: a sample block's layout.
  DataSchema Layout() const;
  // The columns of one role, in schema order.
  std::vector<const ColumnSchema*> OfRole(ColumnRole role) const;
  // The sparse features' tables in the order they are first named.
  std::vector<std::string> Tables() const;
  // Each sparse feature's table's index in Tables().
  std::vector<uint32_t> FeatureTables() const;
};

// Criteo's layout: label, num_dense integer counts (log1p), num_sparse hex
// ids in tables C1..C<num_sparse>, tab-separated, no header.
ColumnsSchema CriteoColumns(uint32_t num_dense = 13, uint32_t num_sparse = 26);

// Errors: InvalidArgument naming the column (`columns[i] 'name'`) for a
// nameless or repeated column, no label, past a limit, a separator that is
// also a multi-hot separator, a scale of 0 or a non-finite number.
absl::Status ValidateColumns(const ColumnsSchema& schema);

}  // namespace herald::data
