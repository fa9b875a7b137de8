#pragma once
// heraldctl evaluate: loads a model exported by `heraldctl export`, or a
// periodic checkpoint, and computes its exact AUC and log loss on the
// held-out split of the job's own data (the samples the scheduler never
// trained on: DataSpec.eval_fraction, same seed), or on the samples of one
// file of the job's data format (`data_file`), on this machine's CPU.
// Scores the batches a job's own evaluations score (held_out.h), so with
// the same batch size and sample cap the numbers are the same.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/tunables.h"

namespace herald::cli {

struct EvaluateOptions {
  std::string model_dir;  // an export, or a checkpoint's iteration directory or MANIFEST
  uint32_t batch = tunables::kEvalBatchSize;  // samples per forward pass
  uint64_t max_samples = 0;                   // the first N held-out samples (0: all)
  // Scores the first max_samples samples of this file (held_out.h,
  // ForEachFileBatch) instead of the held-out split; empty: the split.
  std::string data_file;
  bool json = false;
  // Also write every scored sample's label, prediction and inputs there
  // (predictions_file.h); empty: none.
  std::string predictions_file;
};

// Errors: the reader's, InvalidArgument when the job held out no data (and
// no data_file is given), the data source's.
absl::Status RunEvaluate(const EvaluateOptions& options);

}  // namespace herald::cli
