#pragma once
// Exact evaluation metrics over all samples (no sampling, no histograms).

#include <vector>

namespace herald::math {

// Area under the ROC curve; tied scores count one half. Labels are 0/1
// (> 0.5 is positive). Returns 0.5 when one class is absent.
double ExactAuc(const std::vector<double>& scores, const std::vector<float>& labels);

// Mean binary cross-entropy of probabilities (clamped to [1e-7, 1 - 1e-7]).
double LogLoss(const std::vector<double>& probabilities, const std::vector<float>& labels);

}  // namespace herald::math
