#include "worker/device/cpu_device.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace herald::worker {

float* CpuDevice::Allocate(size_t floats) {
  if (floats == 0) return nullptr;
  // 64-byte alignment for vector loads; zero-initialised as documented.
  float* p = static_cast<float*>(::operator new[](floats * sizeof(float), std::align_val_t(64)));
  std::memset(p, 0, floats * sizeof(float));
  return p;
}

void CpuDevice::Free(float* p) {
  if (p != nullptr) ::operator delete[](p, std::align_val_t(64));
}

void CpuDevice::CopyToDevice(const float* host, float* device, size_t floats) {
  if (floats) std::memcpy(device, host, floats * sizeof(float));
}

void CpuDevice::CopyToHost(const float* device, float* host, size_t floats) {
  if (floats) std::memcpy(host, device, floats * sizeof(float));
}

void CpuDevice::Fill(float* x, size_t n, float value) { std::fill(x, x + n, value); }

void CpuDevice::Gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
                     const float* a, int lda, const float* b, int ldb, float beta, float* c,
                     int ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

void CpuDevice::Axpy(size_t n, float alpha, const float* x, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void CpuDevice::AddRowVector(const float* bias, int rows, int cols, float* y) {
  for (int r = 0; r < rows; ++r) {
    float* row = y + static_cast<size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) row[c] += bias[c];
  }
}

void CpuDevice::SumRows(const float* x, int rows, int cols, float* out) {
  std::fill(out, out + cols, 0.0f);
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) out[c] += row[c];
  }
}

void CpuDevice::Relu(const float* x, size_t n, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void CpuDevice::ReluBackward(const float* x, const float* dy, size_t n, float* dx) {
  for (size_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

void CpuDevice::GatherRows(const float* rows, int row_stride, const int32_t* slots, int n, int dim,
                           float* out) {
  for (int i = 0; i < n; ++i) {
    std::memcpy(out + static_cast<size_t>(i) * dim,
                rows + static_cast<size_t>(slots[i]) * row_stride, dim * sizeof(float));
  }
}

void CpuDevice::ScatterAddRows(const float* in, const int32_t* slots, int n, int dim,
                               int row_stride, float* rows) {
  for (int i = 0; i < n; ++i) {
    float* row = rows + static_cast<size_t>(slots[i]) * row_stride;
    const float* src = in + static_cast<size_t>(i) * dim;
    for (int d = 0; d < dim; ++d) row[d] += src[d];
  }
}

}  // namespace herald::worker
