#pragma once
// heraldctl evaluate --predictions FILE: every scored held-out sample, its
// label, the model's prediction and the inputs the model saw, as text, so
// that another implementation of the model (herald.torch, a serving
// stack) can be checked sample by sample against Herald's own scoring.
//
// Format (docs/python.md): tab-separated lines. The first line names the
// columns: `label`, `prediction`, `dense`, then one column per sparse
// feature in the model's feature order (a schema's sparse columns in
// column order; without a schema, the tables in spec order), each named
// by its column or table. Then one line per held-out sample, in the order
// they were scored:
//   label, prediction  %.9g (float32 round-trips); a model of several heads
//                      (model.graph): one per head, in head order,
//                      comma-separated
//   dense              the dense features as the model got them, comma-
//                      separated (empty without dense features)
//   each feature       its ids' 64-bit keys (decimal) separated by spaces,
//                      each followed by `:weight` where the data has per-id
//                      weights; empty for a sample without ids.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/data/key_batch.h"
#include "proto/job.pb.h"

namespace herald::cli {

class PredictionsFile {
 public:
  // Creates (truncates) `path` and writes the column line. Errors:
  // the file's (naming it).
  static absl::Status Open(const std::string& path, const proto::JobSpec& spec,
                           PredictionsFile* out);
  PredictionsFile() = default;
  PredictionsFile(const PredictionsFile&) = delete;
  PredictionsFile& operator=(const PredictionsFile&) = delete;
  ~PredictionsFile();

  // One line per sample of `batch`. REQUIRES: predictions.size() ==
  // batch.num_samples × heads (sample by sample). Errors: a failed write, naming the file.
  absl::Status Add(const data::KeyBatch& batch, const std::vector<float>& predictions);
  // Flushes and closes; errors: a failed write (disk full), naming the file.
  absl::Status Close();

 private:
  struct Feature {
    uint32_t table = 0;
    uint32_t index_in_table = 0;
  };

  std::string path_;
  std::FILE* file_ = nullptr;
  uint32_t num_dense_ = 0;
  std::vector<uint32_t> label_columns_;  // each head's, among a sample's labels
  std::vector<Feature> features_;
};

}  // namespace herald::cli
