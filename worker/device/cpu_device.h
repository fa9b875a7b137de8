#pragma once
// Device on the host CPU: plain memory, GEMM from OpenBLAS, the rest as
// straightforward loops. Operations run synchronously on the calling thread.

#include "worker/device/device.h"

namespace herald::worker {

class CpuDevice final : public Device {
 public:
  std::string name() const override { return "cpu"; }
  float* Allocate(size_t floats) override;
  void Free(float* p) override;
  void CopyToDevice(const float* host, float* device, size_t floats) override;
  void CopyToHost(const float* device, float* host, size_t floats) override;
  void Fill(float* x, size_t n, float value) override;
  void Synchronize() override {}

  void Gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
            int lda, const float* b, int ldb, float beta, float* c, int ldc) override;
  void Axpy(size_t n, float alpha, const float* x, float* y) override;
  void AddRowVector(const float* bias, int rows, int cols, float* y) override;
  void SumRows(const float* x, int rows, int cols, float* out) override;
  void Relu(const float* x, size_t n, float* y) override;
  void ReluBackward(const float* x, const float* dy, size_t n, float* dx) override;
  void GatherRows(const float* rows, int row_stride, const int32_t* slots, int n, int dim,
                  float* out) override;
  void ScatterAddRows(const float* in, const int32_t* slots, int n, int dim, int row_stride,
                      float* rows) override;
};

}  // namespace herald::worker
