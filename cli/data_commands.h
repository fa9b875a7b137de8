#pragma once
// heraldctl data subcommands: gen-data, data stats, convert.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace herald::cli {

struct GenDataOptions {
  uint64_t rows = 0;
  uint64_t seed = 1;
  std::string out;
  std::string format = "tsv";            // tsv | bin
  std::string correlation = "entities";  // entities | none
  double cardinality_scale = 1.0;
  uint32_t threads = 0;                 // 0: hardware concurrency
  uint64_t teacher_auc_rows = 1000000;  // rows the teacher AUC is measured on
  // A DataSchemaSpec text file: rows of its columns instead
  // (common/data/schema_generator.h; 1000 × cardinality_scale ids per
  // sparse column).
  std::string schema;
};

// Writes a synthetic Criteo-shaped dataset and prints a summary (rows, click
// rate, the teacher's AUC); with a schema, delimited text of its columns.
absl::Status RunGenData(const GenDataOptions& options);

struct DataStatsOptions {
  std::vector<std::string> paths;
  std::string format = "auto";
  bool json = false;
  uint32_t max_malformed_shown = 20;
  std::string schema;  // a DataSchemaSpec text file: the inputs are CSV it describes
};

// Prints rows, per-table distinct keys and hot-key shares, and every
// malformed line found (capped, with a count); with a column schema (CSV
// and --schema, binary version 2) per-column figures and string collisions.
absl::Status RunDataStats(const DataStatsOptions& options);

struct ConvertOptions {
  std::vector<std::string> inputs;
  std::string out;
  std::string from = "auto";  // auto | tsv | bin
  std::string to = "bin";     // tsv | bin
  bool skip_malformed = false;
  // A DataSchemaSpec in text format: the inputs are delimited text it
  // describes, and a binary output is version 2 with the schema stored.
  std::string schema;
};

// Converts between the Criteo TSV, CSV (with a schema) and Herald binary
// formats. A binary input of version 2 stays version 2.
absl::Status RunConvert(const ConvertOptions& options);

}  // namespace herald::cli
