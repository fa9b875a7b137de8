#include "worker/eval/evaluator.h"

namespace herald::worker {

void Evaluator::Add(const std::vector<float>& predictions, const std::vector<float>& labels) {
  predictions_.insert(predictions_.end(), predictions.begin(), predictions.end());
  labels_.insert(labels_.end(), labels.begin(), labels.end());
}

void Evaluator::Merge(const Evaluator& other) {
  predictions_.insert(predictions_.end(), other.predictions_.begin(), other.predictions_.end());
  labels_.insert(labels_.end(), other.labels_.begin(), other.labels_.end());
}

EvalMetrics Evaluator::Compute() const {
  return math::JudgeLabel(label_, regression_, predictions_, labels_);
}

void Evaluator::Clear() {
  predictions_.clear();
  labels_.clear();
}

}  // namespace herald::worker
