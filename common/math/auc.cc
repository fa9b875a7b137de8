#include "common/math/auc.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace herald::math {

double ExactAuc(const std::vector<double>& scores, const std::vector<float>& labels) {
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney U with average ranks for ties.
  double rank_sum_pos = 0;
  double positives = 0;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    double avg_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1..j
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] > 0.5f) {
        rank_sum_pos += avg_rank;
        positives += 1;
      }
    }
    i = j;
  }
  double negatives = static_cast<double>(n) - positives;
  if (positives == 0 || negatives == 0) return 0.5;
  return (rank_sum_pos - positives * (positives + 1) / 2) / (positives * negatives);
}

double LogLoss(const std::vector<double>& p, const std::vector<float>& labels) {
  if (p.empty()) return 0.0;
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    double q = std::clamp(p[i], 1e-7, 1.0 - 1e-7);
    sum += labels[i] > 0.5f ? -std::log(q) : -std::log(1.0 - q);
  }
  return sum / static_cast<double>(p.size());
}

}  // namespace herald::math
