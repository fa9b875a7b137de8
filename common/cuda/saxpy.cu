#include "common/cuda/saxpy.h"

#include <cuda_runtime.h>

namespace herald::cuda {
namespace {
__global__ void SaxpyKernel(float a, const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
}  // namespace

int LaunchSaxpy(float a, const float* x, float* y, size_t n) {
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  if (n > 0) SaxpyKernel<<<blocks, threads>>>(a, x, y, n);
  return static_cast<int>(cudaGetLastError());
}
}  // namespace herald::cuda
