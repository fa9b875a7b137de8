#pragma once
// heraldctl evaluate: loads a model exported by `heraldctl export` and
// computes its exact AUC and log loss on the held-out split of the job's own
// data (the samples the scheduler never trained on: DataSpec.eval_fraction,
// same seed), on this machine's CPU.

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace herald::cli {

struct EvaluateOptions {
  std::string model_dir;
  uint32_t batch = 4096;  // samples per forward pass
  bool json = false;
};

// Errors: the reader's, InvalidArgument when the job held out no data, the
// data source's.
absl::Status RunEvaluate(const EvaluateOptions& options);

}  // namespace herald::cli
