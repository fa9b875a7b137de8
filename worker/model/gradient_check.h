#pragma once
// Finite-difference gradient checking for layer and model tests (testonly).
// Works on the CpuDevice, whose device pointers are host pointers.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace herald::worker::testing {

struct GradientCheckOptions {
  double epsilon = 1e-3;  // central difference step
  double abs_tolerance = 2e-3;
  double rel_tolerance = 3e-2;
  size_t max_coordinates = 64;  // spread evenly over the array
};

// For coordinates i of `values` (n floats), compares analytic[i] with
// (loss(values + ε·e_i) − loss(values − ε·e_i)) / 2ε; every mismatch is an
// EXPECT failure naming `what` and i. Leaves `values` unchanged.
void ExpectGradientMatches(const std::function<double()>& loss, float* values,
                           const std::vector<float>& analytic, const std::string& what,
                           const GradientCheckOptions& options = {});

// Deterministic values uniform in [-scale, scale), away from 0 by `gap`
// (keeps ReLU inputs off the kink).
std::vector<float> TestValues(size_t n, uint64_t seed, float scale = 1.0f, float gap = 0.0f);

}  // namespace herald::worker::testing
