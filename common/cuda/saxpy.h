#pragma once
// A small CUDA target that proves the nvcc build path (--config=cuda) and the
// GPU test convention (skip visibly where no device exists). Host-only API:
// callers need no CUDA headers.

#include <cstddef>
#include <string>
#include <vector>

namespace herald::cuda {

// Number of visible CUDA devices; 0 with `why` set when none can be used
// (no driver, no device).
int DeviceCount(std::string* why);

// y[i] = a * x[i] + y[i] computed on device 0. Returns "" on success or the
// failing CUDA call with its error string.
std::string SaxpyOnDevice(float a, const std::vector<float>& x, std::vector<float>* y);

}  // namespace herald::cuda
