#pragma once
// Shape of a training sample: `num_labels` labels, `num_dense` dense
// features and `num_sparse` categorical features. What the columns are and
// how they are read: column_schema.h.

#include <array>
#include <cstdint>

namespace herald::data {

struct DataSchema {
  uint32_t num_dense = 13;
  uint32_t num_sparse = 26;
  uint32_t num_labels = 1;
  // Every key carries a weight (SampleBlock::weights): some sparse column
  // of the schema has per-id weights.
  bool weighted = false;
  // Dense features of data read with a column schema (CSV, binary version
  // 2); Criteo's layout (its TSV, binary version 1) holds at most
  // kMaxCriteoDense, its integers in one 32-bit missing mask.
  static constexpr uint32_t kMaxDense = 1024;
  static constexpr uint32_t kMaxCriteoDense = 32;
  static constexpr uint32_t kMaxSparse = 1024;
  // 32-bit words of a sample's missing mask (at least one).
  uint32_t missing_words() const { return num_dense <= 32 ? 1 : (num_dense + 31) / 32; }
  friend bool operator==(const DataSchema& a, const DataSchema& b) {
    return a.num_dense == b.num_dense && a.num_sparse == b.num_sparse &&
           a.num_labels == b.num_labels && a.weighted == b.weighted;
  }
};

// The Criteo Kaggle (Display Advertising Challenge) layout.
inline constexpr DataSchema kCriteoSchema{13, 26};

// Published distinct-value counts of the 26 Criteo Kaggle categorical features.
inline constexpr std::array<uint64_t, 26> kCriteoKaggleCardinalities = {
    1460, 583,   10131227, 2202608, 305,  24,   12517, 633,     3,  93145, 5683,   8351593, 3194,
    27,   14992, 5461306,  10,      5652, 2173, 4,     7046547, 18, 15,    286181, 105,     142572};

}  // namespace herald::data
