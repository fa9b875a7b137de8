#pragma once
// The one summation order of a row's gradients from several workers: the
// lowest rank's gradient, then each next rank's added in turn. The PS shard
// sums pushed gradients this way at a commit (ps_server/shard/job_shard.cc)
// and a row's owner sums the gradients it gathers the same way
// (worker/cache/step_executor.cc), so both apply the same bits.

#include <algorithm>
#include <cstdint>

namespace herald::math {

// Sorts `parts` (a vector-like container) by rank(part) and writes the rank-ordered sum of the
// `dim` floats at values(part) into `sum`. REQUIRES: parts non-empty, ranks distinct, every
// values(part) and `sum` hold dim floats.
template <typename Parts, typename RankOf, typename ValuesOf>
void RankOrderedSum(Parts& parts, uint32_t dim, RankOf rank, ValuesOf values, float* sum) {
  using Part = typename Parts::value_type;
  std::sort(parts.begin(), parts.end(),
            [&](const Part& a, const Part& b) { return rank(a) < rank(b); });
  const float* first = values(parts[0]);
  std::copy(first, first + dim, sum);
  for (size_t c = 1; c < parts.size(); ++c) {
    const float* next = values(parts[c]);
    for (uint32_t d = 0; d < dim; ++d) sum[d] += next[d];
  }
}

}  // namespace herald::math
