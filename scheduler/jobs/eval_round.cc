#include "scheduler/jobs/eval_round.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/math/label_metrics.h"

namespace herald::scheduler {

EvalRound::EvalRound(uint64_t iteration, std::vector<uint32_t> batch_sizes, uint32_t workers,
                     std::vector<TrainedLabel> labels)
    : iteration_(iteration),
      batch_sizes_(std::move(batch_sizes)),
      workers_(workers),
      labels_(std::move(labels)),
      predictions_(batch_sizes_.size()),
      answered_(batch_sizes_.size(), false) {}

absl::Status EvalRound::Accept(uint32_t worker, uint32_t index, const std::string& predictions) {
  const std::string what = absl::StrCat("evaluation before iteration ", iteration_,
                                        ", held-out batch ", index, " from worker ", worker);
  if (index >= batch_sizes_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": there are ", batch_sizes_.size(), " batches"));
  }
  if (WorkerOf(index, workers_) != worker) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": it is worker ", WorkerOf(index, workers_), "'s"));
  }
  if (answered_[index]) return absl::AlreadyExistsError(absl::StrCat(what, ": answered twice"));
  const size_t heads = labels_.size();
  const size_t n = batch_sizes_[index] * heads;
  if (predictions.size() != n * sizeof(float)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", predictions.size(), " bytes of predictions, expected ", n * sizeof(float), " (",
        batch_sizes_[index], " samples × ", heads, " head(s))"));
  }
  std::vector<float> p(n);
  std::memcpy(p.data(), predictions.data(), predictions.size());
  for (size_t i = 0; i < n; ++i) {
    const bool regression = labels_[i % heads].regression;
    if (regression && !std::isfinite(p[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": prediction ", i, " is ", p[i], ", not a finite number"));
    }
    if (!regression && !(p[i] >= 0.0f && p[i] <= 1.0f)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": prediction ", i, " is ", p[i], ", not a probability"));
    }
  }
  predictions_[index] = std::move(p);
  answered_[index] = true;
  ++received_;
  return absl::OkStatus();
}

EvalResult EvalRound::Compute(const std::vector<float>& labels, uint32_t num_labels) const {
  const size_t heads = labels_.size();
  EvalResult result;
  for (size_t h = 0; h < heads; ++h) {
    std::vector<double> scores;
    for (const std::vector<float>& batch : predictions_) {
      for (size_t i = h; i < batch.size(); i += heads) scores.push_back(batch[i]);
    }
    const std::vector<float> truth = math::ColumnOf(labels, num_labels, labels_[h].column);
    if (scores.size() != truth.size()) scores.clear();
    result.push_back(math::JudgeLabel(labels_[h].name, labels_[h].regression, scores, truth));
  }
  return result;
}

}  // namespace herald::scheduler
