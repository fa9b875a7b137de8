#pragma once
// Exact held-out metrics of one label (common/math/label_metrics.h): every
// prediction is kept and the metrics computed over all of them (no
// sampling, no histogram buckets).

#include <cstdint>
#include <string>
#include <vector>

#include "common/math/label_metrics.h"

namespace herald::worker {

using EvalMetrics = math::LabelMetrics;

class Evaluator {
 public:
  // `regression`: the predictions are a regression label's values (RMSE),
  // else a binary label's click probabilities (AUC, log loss).
  explicit Evaluator(std::string label = "label", bool regression = false)
      : label_(std::move(label)), regression_(regression) {}

  // REQUIRES: same sizes.
  void Add(const std::vector<float>& predictions, const std::vector<float>& labels);
  // Merges another evaluator's predictions (e.g. from another worker).
  void Merge(const Evaluator& other);
  EvalMetrics Compute() const;
  void Clear();

 private:
  std::string label_;
  bool regression_;
  std::vector<double> predictions_;
  std::vector<float> labels_;
};

}  // namespace herald::worker
