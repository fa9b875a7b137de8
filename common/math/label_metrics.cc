#include "common/math/label_metrics.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "common/math/auc.h"

namespace herald::math {

double RootMeanSquaredError(const std::vector<double>& predictions,
                            const std::vector<float>& labels) {
  if (predictions.empty()) return 0;
  double sum = 0;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const double e = predictions[i] - labels[i];
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(predictions.size()));
}

LabelMetrics JudgeLabel(const std::string& label, bool regression,
                        const std::vector<double>& predictions, const std::vector<float>& labels) {
  LabelMetrics m;
  m.label = label;
  m.regression = regression;
  m.samples = predictions.size();
  if (predictions.empty()) return m;
  if (regression) {
    m.rmse = RootMeanSquaredError(predictions, labels);
  } else {
    m.auc = ExactAuc(predictions, labels);
    m.logloss = LogLoss(predictions, labels);
  }
  return m;
}

std::vector<float> ColumnOf(const std::vector<float>& matrix, size_t columns, size_t column) {
  std::vector<float> out;
  out.reserve(matrix.size() / columns);
  for (size_t i = column; i < matrix.size(); i += columns) out.push_back(matrix[i]);
  return out;
}

std::string DescribeMetrics(const LabelMetrics& m) {
  if (m.regression) return absl::StrFormat("RMSE %.4f (%s)", m.rmse, m.label);
  return absl::StrFormat("AUC %.4f, log loss %.4f (%s)", m.auc, m.logloss, m.label);
}

}  // namespace herald::math
