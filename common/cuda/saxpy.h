#pragma once
// Host API of a small CUDA target proving the nvcc build path.
#include <cstddef>
namespace herald::cuda {
// y[i] = a * x[i] + y[i] on device pointers; returns a cudaError_t as int.
int LaunchSaxpy(float a, const float* x, float* y, size_t n);
}  // namespace herald::cuda
