#pragma once
// The small compute interface the model code is written against, so that one
// model implementation runs on the CPU (OpenBLAS) and on a CUDA GPU.
//
// All matrices are row-major float32. Pointers returned by Allocate() live in
// the device's memory; the host reaches them only through CopyToDevice /
// CopyToHost. Operations are issued in order; Synchronize() waits for them.
// Results are deterministic: the same inputs give the same bits on the same
// device (no atomics in reductions).

#include <cstddef>
#include <cstdint>
#include <string>

namespace herald::worker {

class Device {
 public:
  virtual ~Device() = default;

  // e.g. "cpu", "cuda:0".
  virtual std::string name() const = 0;

  // Zero-initialised buffer of `floats` floats; nullptr for 0.
  virtual float* Allocate(size_t floats) = 0;
  virtual void Free(float* p) = 0;
  virtual void CopyToDevice(const float* host, float* device, size_t floats) = 0;
  virtual void CopyToHost(const float* device, float* host, size_t floats) = 0;
  virtual void Fill(float* x, size_t n, float value) = 0;
  virtual void Synchronize() = 0;

  // C[m×n] = alpha · op(A) · op(B) + beta · C, op(X) = X or Xᵀ. A is m×k after
  // op, B is k×n after op; lda/ldb/ldc are row strides as stored.
  virtual void Gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
                    const float* a, int lda, const float* b, int ldb, float beta, float* c,
                    int ldc) = 0;

  // y += alpha · x
  virtual void Axpy(size_t n, float alpha, const float* x, float* y) = 0;
  // y[r, c] += bias[c] for every row r of y[rows×cols].
  virtual void AddRowVector(const float* bias, int rows, int cols, float* y) = 0;
  // out[c] = Σ_r x[r, c] (rows summed in ascending order).
  virtual void SumRows(const float* x, int rows, int cols, float* out) = 0;
  // y = max(x, 0)
  virtual void Relu(const float* x, size_t n, float* y) = 0;
  // dx = dy where x > 0, else 0.
  virtual void ReluBackward(const float* x, const float* dy, size_t n, float* dx) = 0;

  // out[i, :] = rows[slots[i] · row_stride + (0..dim)], i < n.
  virtual void GatherRows(const float* rows, int row_stride, const int32_t* slots, int n, int dim,
                          float* out) = 0;
  // rows[slots[i] · row_stride + (0..dim)] += in[i, :], in order of i (a slot
  // may repeat; the additions happen in index order).
  virtual void ScatterAddRows(const float* in, const int32_t* slots, int n, int dim, int row_stride,
                              float* rows) = 0;
};

}  // namespace herald::worker
