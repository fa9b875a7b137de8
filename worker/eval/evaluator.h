#pragma once
// Exact held-out metrics: every prediction is kept and AUC is computed over
// all of them (no sampling, no histogram buckets), log loss likewise.

#include <cstdint>
#include <vector>

namespace herald::worker {

struct EvalMetrics {
  double auc = 0.5;
  double logloss = 0.0;
  uint64_t samples = 0;
};

class Evaluator {
 public:
  // REQUIRES: same sizes.
  void Add(const std::vector<float>& probabilities, const std::vector<float>& labels);
  // Merges another evaluator's predictions (e.g. from another worker).
  void Merge(const Evaluator& other);
  EvalMetrics Compute() const;
  void Clear();

 private:
  std::vector<double> probabilities_;
  std::vector<float> labels_;
};

}  // namespace herald::worker
