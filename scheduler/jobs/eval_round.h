#pragma once
// One evaluation during a job: the workers' predictions for every held-out
// batch (batch i is worker i mod W's), and the exact metrics over all of
// them once every batch is in. The predictions are combined in batch order,
// so the metrics are those of one process scoring the batches in order
// (`heraldctl evaluate`), whatever the worker count.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/math/label_metrics.h"
#include "common/trained_label.h"

namespace herald::scheduler {

// The metrics of each label the model predicts, in head order.
using EvalResult = std::vector<math::LabelMetrics>;

class EvalRound {
 public:
  // `batch_sizes`: samples per held-out batch, in order; `labels`: what the
  // predictions are of, one per head (click probabilities of a binary
  // label, values of a regression label).
  EvalRound(uint64_t iteration, std::vector<uint32_t> batch_sizes, uint32_t workers,
            std::vector<TrainedLabel> labels = {TrainedLabel{}});

  static uint32_t WorkerOf(uint32_t batch, uint32_t workers) { return batch % workers; }

  // The step iteration the evaluation runs before (WorkerStep.iteration).
  uint64_t iteration() const { return iteration_; }
  // Batch `index`'s predictions from worker `worker` (float32 bytes,
  // sample by sample, head by head).
  // Errors: InvalidArgument (no such batch, another worker's, wrong size, a
  // prediction that is not a probability, or for a regression label not a
  // finite number), AlreadyExists (answered twice).
  absl::Status Accept(uint32_t worker, uint32_t index, const std::string& predictions);
  bool complete() const { return received_ == batch_sizes_.size(); }
  // REQUIRES: complete(). `labels`: every batch's, in order, `num_labels`
  // per sample (every label column of the data).
  EvalResult Compute(const std::vector<float>& labels, uint32_t num_labels = 1) const;

 private:
  const uint64_t iteration_;
  const std::vector<uint32_t> batch_sizes_;
  const uint32_t workers_;
  const std::vector<TrainedLabel> labels_;
  std::vector<std::vector<float>> predictions_;  // by batch
  std::vector<bool> answered_;
  size_t received_ = 0;
};

}  // namespace herald::scheduler
