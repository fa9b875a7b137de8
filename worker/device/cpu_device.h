#pragma once
// Device on the host CPU: plain memory, GEMM from OpenBLAS, the rest as
// straightforward loops in index order. Operations run synchronously on the
// calling thread.

#include "worker/device/device.h"

namespace herald::worker {

class CpuDevice final : public Device {
 public:
  std::string name() const override { return "cpu"; }
  void* AllocateBytes(size_t bytes) override;
  void FreeBytes(void* p) override;
  void CopyToDevice(const void* host, void* device, size_t bytes) override;
  void CopyToHost(const void* device, void* host, size_t bytes) override;
  void CopyOnDevice(const void* from, void* to, size_t bytes) override;
  void Fill(float* x, size_t n, float value) override;
  void Synchronize() override {}

  void Gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
            int lda, const float* b, int ldb, float beta, float* c, int ldc) override;
  void Axpy(size_t n, float alpha, const float* x, float* y) override;
  void AddRowVector(const float* bias, int rows, int cols, float* y) override;
  void SumRows(const float* x, int rows, int cols, float* out) override;
  void Copy2D(const float* from, int from_stride, int rows, int cols, float* to,
              int to_stride) override;
  void Add2D(const float* from, int from_stride, int rows, int cols, float* to,
             int to_stride) override;

  void Relu(const float* x, size_t n, float* y) override;
  void ReluBackward(const float* y, const float* dy, size_t n, float* dx) override;
  void Sigmoid(const float* x, size_t n, float* y) override;
  void SquaredError(const float* outputs, const float* labels, int n, float grad_scale,
                    float* losses, float* doutputs) override;
  void SigmoidCrossEntropy(const float* logits, const float* labels, int n, float grad_scale,
                           float* losses, float* dlogits) override;
  void Multiply2D(const float* a, int a_stride, const float* b, int b_stride, int rows, int cols,
                  float* out, int out_stride, bool accumulate) override;
  void AddScaledRows(const float* s, const float* x, int x_stride, int rows, int cols, float* y,
                     int y_stride) override;
  void DropoutMask(uint64_t key, uint64_t iteration, const uint32_t* samples, int rows, int width,
                   float p, float* mask) override;
  void RowDots(const float* a, int a_stride, const float* b, int b_stride, int rows, int cols,
               float* out) override;

  void FmForward(const float* x, int x_stride, int rows, int fields, int dim, float* out) override;
  void FmBackward(const float* x, int x_stride, const float* dout, int rows, int fields, int dim,
                  float* dx, int dx_stride) override;
  void DotInteractionForward(const float* x, int x_stride, int rows, int fields, int dim,
                             float* out, int out_stride) override;
  void DotInteractionBackward(const float* x, int x_stride, const float* dout, int dout_stride,
                              int rows, int fields, int dim, float* dx, int dx_stride) override;

  void EmbeddingBagForward(const float* rows, int row_stride, const uint32_t* offsets,
                           const uint32_t* slots, const float* weights, int n, int dim,
                           Pooling pooling, float* out, int out_stride) override;
  void EmbeddingBagBackward(const float* dout, int dout_stride, const uint32_t* offsets,
                            const uint32_t* slots, const float* weights, int n, int dim,
                            Pooling pooling, float* grads, int grad_stride) override;
  void GatherRows(const float* rows, int row_stride, const uint32_t* slots, int n, int width,
                  float* out) override;
  void ScatterRows(const float* in, const uint32_t* slots, int n, int width, int row_stride,
                   float* rows) override;
  void ZeroRows(const uint32_t* slots, int n, int width, int row_stride, float* rows) override;

  void ApplyOptimizer(const math::SparseOptimizerConfig& config, size_t n, const float* grad,
                      float* values, float* state) override;
  void ApplyRowUpdates(const math::SparseOptimizerConfig& config, int dim, const uint32_t* slots,
                       int n, const float* grads, int grad_stride, float* rows,
                       int row_stride) override;
};

}  // namespace herald::worker
