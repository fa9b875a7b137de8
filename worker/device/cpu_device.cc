#include "worker/device/cpu_device.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "worker/device/dropout_rules.h"
#include "worker/device/elementwise_rules.h"

// The same float operations as written (no contraction into fused
// multiply-add), so the CUDA device (built with --fmad=false) can match.
#if defined(__GNUC__) && !defined(__clang__)  // clang has no such pragma
#pragma GCC optimize("O3", "fp-contract=off")
#endif

namespace herald::worker {
namespace {

size_t At(int row, int stride) { return static_cast<size_t>(row) * stride; }

}  // namespace

void* CpuDevice::AllocateBytes(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = ::operator new[](bytes, std::align_val_t(64));
  std::memset(p, 0, bytes);
  return p;
}

void CpuDevice::FreeBytes(void* p) {
  if (p != nullptr) ::operator delete[](p, std::align_val_t(64));
}

void CpuDevice::CopyToDevice(const void* host, void* device, size_t bytes) {
  if (bytes) std::memcpy(device, host, bytes);
}

void CpuDevice::CopyToHost(const void* device, void* host, size_t bytes) {
  if (bytes) std::memcpy(host, device, bytes);
}

void CpuDevice::CopyOnDevice(const void* from, void* to, size_t bytes) {
  if (bytes) std::memmove(to, from, bytes);
}

void CpuDevice::Fill(float* x, size_t n, float value) { std::fill(x, x + n, value); }

void CpuDevice::Gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
                     const float* a, int lda, const float* b, int ldb, float beta, float* c,
                     int ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) c[At(i, ldc) + j] *= beta;
    return;
  }
  if (n == 1) {
    // A matrix-vector product: sgemv is several times faster than sgemm's
    // packing for a single column (the wide part and every 1-unit output).
    const int rows = transpose_a ? k : m, cols = transpose_a ? m : k;
    cblas_sgemv(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, rows, cols, alpha, a, lda,
                b, transpose_b ? 1 : ldb, beta, c, ldc);
    return;
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

void CpuDevice::Axpy(size_t n, float alpha, const float* x, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void CpuDevice::AddRowVector(const float* bias, int rows, int cols, float* y) {
  for (int r = 0; r < rows; ++r) {
    float* row = y + At(r, cols);
    for (int c = 0; c < cols; ++c) row[c] += bias[c];
  }
}

void CpuDevice::SumRows(const float* x, int rows, int cols, float* out) {
  std::fill(out, out + cols, 0.0f);
  std::vector<float> block_sum(cols);
  for (int first = 0; first < rows; first += kSumRowsBlock) {
    std::fill(block_sum.begin(), block_sum.end(), 0.0f);
    for (int r = first; r < std::min(rows, first + kSumRowsBlock); ++r) {
      const float* row = x + At(r, cols);
      for (int c = 0; c < cols; ++c) block_sum[c] += row[c];
    }
    for (int c = 0; c < cols; ++c) out[c] += block_sum[c];
  }
}

void CpuDevice::Copy2D(const float* from, int from_stride, int rows, int cols, float* to,
                       int to_stride) {
  for (int r = 0; r < rows; ++r) {
    std::memcpy(to + At(r, to_stride), from + At(r, from_stride), cols * sizeof(float));
  }
}

void CpuDevice::Add2D(const float* from, int from_stride, int rows, int cols, float* to,
                      int to_stride) {
  for (int r = 0; r < rows; ++r) {
    const float* src = from + At(r, from_stride);
    float* dst = to + At(r, to_stride);
    for (int c = 0; c < cols; ++c) dst[c] += src[c];
  }
}

void CpuDevice::Relu(const float* x, size_t n, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = ReluOf(x[i]);
}

void CpuDevice::ReluBackward(const float* y, const float* dy, size_t n, float* dx) {
  for (size_t i = 0; i < n; ++i) dx[i] += ReluGradient(y[i], dy[i]);
}

void CpuDevice::Sigmoid(const float* x, size_t n, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = SigmoidOf(x[i]);
}

void CpuDevice::SigmoidCrossEntropy(const float* logits, const float* labels, int n,
                                    float grad_scale, float* losses, float* dlogits) {
  for (int i = 0; i < n; ++i) {
    SigmoidCrossEntropyOf(logits[i], labels[i], grad_scale, &losses[i], &dlogits[i]);
  }
}

void CpuDevice::SquaredError(const float* outputs, const float* labels, int n, float grad_scale,
                             float* losses, float* doutputs) {
  for (int i = 0; i < n; ++i) {
    SquaredErrorOf(outputs[i], labels[i], grad_scale, &losses[i], &doutputs[i]);
  }
}

void CpuDevice::Multiply2D(const float* a, int a_stride, const float* b, int b_stride, int rows,
                           int cols, float* out, int out_stride, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    const float* ar = a + At(r, a_stride);
    const float* br = b + At(r, b_stride);
    float* o = out + At(r, out_stride);
    for (int c = 0; c < cols; ++c) o[c] = (accumulate ? o[c] : 0.0f) + ar[c] * br[c];
  }
}

void CpuDevice::AddScaledRows(const float* s, const float* x, int x_stride, int rows, int cols,
                              float* y, int y_stride) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + At(r, x_stride);
    float* yr = y + At(r, y_stride);
    for (int c = 0; c < cols; ++c) yr[c] += s[r] * xr[c];
  }
}

void CpuDevice::RowDots(const float* a, int a_stride, const float* b, int b_stride, int rows,
                        int cols, float* out) {
  for (int r = 0; r < rows; ++r) {
    const float* ar = a + At(r, a_stride);
    const float* br = b + At(r, b_stride);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += ar[c] * br[c];
    out[r] = s;
  }
}

void CpuDevice::DropoutMask(uint64_t key, uint64_t iteration, const uint32_t* samples, int rows,
                            int width, float p, float* mask) {
  const float keep_scale = 1.0f / (1.0f - p);
  for (int r = 0; r < rows; ++r) {
    const uint32_t sample = samples != nullptr ? samples[r] : static_cast<uint32_t>(r);
    float* row = mask + At(r, width);
    for (int c = 0; c < width; c += 4) {
      const PhiloxBlock bits = DropoutBits(key, iteration, sample, static_cast<uint32_t>(c / 4));
      for (int j = 0; j < 4 && c + j < width; ++j) {
        row[c + j] = DropoutScaleOf(bits.v[j], p, keep_scale);
      }
    }
  }
}

void CpuDevice::FmForward(const float* x, int x_stride, int rows, int fields, int dim, float* out) {
  for (int r = 0; r < rows; ++r) out[r] = FmOfRow(x + At(r, x_stride), fields, dim);
}

void CpuDevice::FmBackward(const float* x, int x_stride, const float* dout, int rows, int fields,
                           int dim, float* dx, int dx_stride) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + At(r, x_stride);
    float* dr = dx + At(r, dx_stride);
    for (int k = 0; k < dim; ++k) {
      float sum = 0.0f;
      for (int f = 0; f < fields; ++f) sum += xr[f * dim + k];
      for (int f = 0; f < fields; ++f) dr[f * dim + k] += dout[r] * (sum - xr[f * dim + k]);
    }
  }
}

void CpuDevice::DotInteractionForward(const float* x, int x_stride, int rows, int fields, int dim,
                                      float* out, int out_stride) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + At(r, x_stride);
    float* o = out + At(r, out_stride);
    int p = 0;
    for (int a = 1; a < fields; ++a) {
      for (int b = 0; b < a; ++b) {
        float s = 0.0f;
        for (int k = 0; k < dim; ++k) s += xr[a * dim + k] * xr[b * dim + k];
        o[p++] = s;
      }
    }
  }
}

void CpuDevice::DotInteractionBackward(const float* x, int x_stride, const float* dout,
                                       int dout_stride, int rows, int fields, int dim, float* dx,
                                       int dx_stride) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + At(r, x_stride);
    const float* g = dout + At(r, dout_stride);
    float* dr = dx + At(r, dx_stride);
    int p = 0;
    for (int a = 1; a < fields; ++a) {
      for (int b = 0; b < a; ++b) {
        const float gp = g[p++];
        for (int k = 0; k < dim; ++k) {
          dr[a * dim + k] += gp * xr[b * dim + k];
          dr[b * dim + k] += gp * xr[a * dim + k];
        }
      }
    }
  }
}

void CpuDevice::EmbeddingBagForward(const float* rows, int row_stride, const uint32_t* offsets,
                                    const uint32_t* slots, const float* weights, int n, int dim,
                                    Pooling pooling, float* out, int out_stride) {
  for (int i = 0; i < n; ++i) {
    float* o = out + At(i, out_stride);
    std::fill(o, o + dim, 0.0f);
    const uint32_t begin = offsets[i], end = offsets[i + 1];
    for (uint32_t j = begin; j < end; ++j) {
      const float* row = rows + static_cast<size_t>(slots[j]) * row_stride;
      if (weights != nullptr) {
        const float w = weights[j];
        for (int d = 0; d < dim; ++d) o[d] += w * row[d];
      } else {
        for (int d = 0; d < dim; ++d) o[d] += row[d];
      }
    }
    if (pooling != Pooling::kSum && end > begin) {
      const float scale = PoolingScale(pooling, end - begin);
      for (int d = 0; d < dim; ++d) o[d] *= scale;
    }
  }
}

void CpuDevice::EmbeddingBagBackward(const float* dout, int dout_stride, const uint32_t* offsets,
                                     const uint32_t* slots, const float* weights, int n, int dim,
                                     Pooling pooling, float* grads, int grad_stride) {
  for (int i = 0; i < n; ++i) {
    const float* g = dout + At(i, dout_stride);
    const uint32_t begin = offsets[i], end = offsets[i + 1];
    const float scale = end > begin ? PoolingScale(pooling, end - begin) : 1.0f;
    for (uint32_t j = begin; j < end; ++j) {
      float* dst = grads + static_cast<size_t>(slots[j]) * grad_stride;
      if (weights != nullptr) {  // the CUDA kernel's order: (g · scale) · w
        const float w = weights[j];
        if (pooling != Pooling::kSum) {
          for (int d = 0; d < dim; ++d) dst[d] += g[d] * scale * w;
        } else {
          for (int d = 0; d < dim; ++d) dst[d] += g[d] * w;
        }
      } else if (pooling != Pooling::kSum) {
        for (int d = 0; d < dim; ++d) dst[d] += g[d] * scale;
      } else {
        for (int d = 0; d < dim; ++d) dst[d] += g[d];
      }
    }
  }
}

void CpuDevice::GatherRows(const float* rows, int row_stride, const uint32_t* slots, int n,
                           int width, float* out) {
  for (int i = 0; i < n; ++i) {
    std::memcpy(out + At(i, width), rows + static_cast<size_t>(slots[i]) * row_stride,
                width * sizeof(float));
  }
}

void CpuDevice::ScatterRows(const float* in, const uint32_t* slots, int n, int width,
                            int row_stride, float* rows) {
  for (int i = 0; i < n; ++i) {
    std::memcpy(rows + static_cast<size_t>(slots[i]) * row_stride, in + At(i, width),
                width * sizeof(float));
  }
}

void CpuDevice::ZeroRows(const uint32_t* slots, int n, int width, int row_stride, float* rows) {
  for (int i = 0; i < n; ++i) {
    float* row = rows + static_cast<size_t>(slots[i]) * row_stride;
    std::fill(row, row + width, 0.0f);
  }
}

void CpuDevice::ApplyOptimizer(const math::SparseOptimizerConfig& config, size_t n,
                               const float* grad, float* values, float* state) {
  math::ApplySparseUpdate(config, static_cast<uint32_t>(n), grad, values, state);
}

void CpuDevice::ApplyRowUpdates(const math::SparseOptimizerConfig& config, int dim,
                                const uint32_t* slots, int n, const float* grads, int grad_stride,
                                float* rows, int row_stride) {
  for (int i = 0; i < n; ++i) {
    float* row = rows + static_cast<size_t>(slots[i]) * row_stride;
    math::ApplySparseUpdate(config, dim, grads + static_cast<size_t>(slots[i]) * grad_stride, row,
                            row + dim);
  }
}

}  // namespace herald::worker
