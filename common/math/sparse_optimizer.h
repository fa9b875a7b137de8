#pragma once
// Sparse (per-row) optimizer math, the one implementation shared by the
// parameter server and the CPU worker (its rules, optimizer_rules.h, are
// the CUDA kernels' too), so
// that a row updated by its exclusive owner equals the same row updated by the
// PS. A row is `dim` values followed by StateFloats(kind, dim) floats of
// optimizer state:
//
//   SGD               -
//   Adagrad           acc[dim]                 acc += g²;        w -= lr·g / (√acc + ε)
//   row-wise Adagrad  acc                      acc += mean(g²);  w -= lr·g / (√acc + ε)
//   Adam              m[dim] v[dim] step       m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
//                                              step += 1; w -= lr·m̂ / (√v̂ + ε),
//                                              m̂ = m / (1-β1^step), v̂ = v / (1-β2^step)
//                                              (β^step by PowerOf, not libm's pow)
//
// Adam's step is a uint32 stored bit for bit in one float slot (exact for
// 2^32 steps). Arithmetic is float, element by element in index order, with
// no fused multiply-add, so every implementation can reproduce it bitwise.

#include <cstdint>

#include "common/math/optimizer_rules.h"

namespace herald::math {

// Floats of optimizer state that follow the `dim` values of a row.
uint32_t StateFloats(SparseOptimizerKind kind, uint32_t dim);

// Floats of a whole row: dim + StateFloats(kind, dim).
inline uint32_t RowFloats(SparseOptimizerKind kind, uint32_t dim) {
  return dim + StateFloats(kind, dim);
}

// The configuration as applied at `iteration` (from 0): learning_rate
// following config.schedule.
SparseOptimizerConfig AtIteration(SparseOptimizerConfig config, uint64_t iteration);

// Writes the initial optimizer state of a new row into `state`.
void InitOptimizerState(const SparseOptimizerConfig& config, uint32_t dim, float* state);

// Applies one update with gradient `grad` (dim floats) to `values` (dim floats)
// and `state` (StateFloats floats). Pure function of its inputs.
void ApplySparseUpdate(const SparseOptimizerConfig& config, uint32_t dim, const float* grad,
                       float* values, float* state);

}  // namespace herald::math
