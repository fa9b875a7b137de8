#pragma once
// One label's held-out metrics over every prediction (auc.h): AUC and log
// loss of a binary label's click probabilities, RMSE of a regression
// label's values. The scheduler's evaluations during a job and `heraldctl
// evaluate` both judge here, so they report the same figures.

#include <cstdint>
#include <string>
#include <vector>

namespace herald::math {

struct LabelMetrics {
  std::string label = "label";
  bool regression = false;
  uint64_t samples = 0;
  double auc = 0.5;    // binary
  double logloss = 0;  // binary
  double rmse = 0;     // regression
};

// √(mean (prediction − label)²); 0 without samples.
double RootMeanSquaredError(const std::vector<double>& predictions,
                            const std::vector<float>& labels);

// REQUIRES: same sizes.
LabelMetrics JudgeLabel(const std::string& label, bool regression,
                        const std::vector<double>& predictions, const std::vector<float>& labels);

// Column `column` of a matrix of `columns` floats per row, row by row
// (a sample's labels, a sample's predictions of several heads).
std::vector<float> ColumnOf(const std::vector<float>& matrix, size_t columns, size_t column);

// "AUC 0.7312, log loss 0.5120 (click)" or "RMSE 1.2034 (rating)".
std::string DescribeMetrics(const LabelMetrics& m);

}  // namespace herald::math
