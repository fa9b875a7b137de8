#include <cuda_runtime.h>

#include <string>

#include "common/cuda/saxpy.h"

namespace herald::cuda {
namespace {

__global__ void SaxpyKernel(float a, const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

std::string Describe(const char* call, cudaError_t e, const char* file, int line) {
  return std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
         cudaGetErrorString(e);
}

#define SAXPY_CUDA(call)                                                   \
  do {                                                                     \
    cudaError_t e_ = (call);                                               \
    if (e_ != cudaSuccess) return Describe(#call, e_, __FILE__, __LINE__); \
  } while (0)

}  // namespace

int DeviceCount(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *why = cudaGetErrorString(e);
    return 0;
  }
  if (n == 0) *why = "no CUDA device visible";
  return n;
}

std::string SaxpyOnDevice(float a, const std::vector<float>& x, std::vector<float>* y) {
  const size_t n = x.size();
  float* dx = nullptr;
  float* dy = nullptr;
  SAXPY_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  SAXPY_CUDA(cudaMalloc(&dy, n * sizeof(float)));
  SAXPY_CUDA(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  SAXPY_CUDA(cudaMemcpy(dy, y->data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const int threads = 256;
  SaxpyKernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads>>>(a, dx, dy, n);
  SAXPY_CUDA(cudaGetLastError());
  SAXPY_CUDA(cudaMemcpy(y->data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  SAXPY_CUDA(cudaFree(dx));
  SAXPY_CUDA(cudaFree(dy));
  return "";
}

}  // namespace herald::cuda
