#include "worker/eval/evaluator.h"

#include "common/math/auc.h"

namespace herald::worker {

void Evaluator::Add(const std::vector<float>& probabilities, const std::vector<float>& labels) {
  probabilities_.insert(probabilities_.end(), probabilities.begin(), probabilities.end());
  labels_.insert(labels_.end(), labels.begin(), labels.end());
}

void Evaluator::Merge(const Evaluator& other) {
  probabilities_.insert(probabilities_.end(), other.probabilities_.begin(),
                        other.probabilities_.end());
  labels_.insert(labels_.end(), other.labels_.begin(), other.labels_.end());
}

EvalMetrics Evaluator::Compute() const {
  EvalMetrics m;
  m.samples = labels_.size();
  if (labels_.empty()) return m;
  m.auc = math::ExactAuc(probabilities_, labels_);
  m.logloss = math::LogLoss(probabilities_, labels_);
  return m;
}

void Evaluator::Clear() {
  probabilities_.clear();
  labels_.clear();
}

}  // namespace herald::worker
