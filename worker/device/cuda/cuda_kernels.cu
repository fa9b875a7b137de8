#include <cuda_runtime.h>

#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "worker/device/cuda/cuda_kernels.h"
#include "worker/device/dropout_rules.h"
#include "worker/device/elementwise_rules.h"
#include "worker/device/pooling.h"

// Compiled with --fmad=false (worker/device/cuda/BUILD.bazel): every a*b+c
// below rounds the product, as the CPU device and common/math do.

namespace herald::worker::cuda {
namespace {

constexpr int kThreads = 256;
constexpr size_t kMaxBlocks = 65535;

unsigned Blocks(size_t n) {
  return static_cast<unsigned>(std::min((n + kThreads - 1) / kThreads, kMaxBlocks));
}

int LastError() { return static_cast<int>(cudaGetLastError()); }

// Grid-stride loop over [0, n).
#define HERALD_GRID_LOOP(i, n)                                                         \
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<size_t>(blockDim.x) * gridDim.x)

// Launches `kernel` over n elements (nothing for n = 0).
template <typename Kernel, typename... Args>
int Launch(Stream stream, size_t n, Kernel kernel, Args... args) {
  if (n == 0) return 0;
  kernel<<<Blocks(n), kThreads, 0, stream>>>(n, args...);
  return LastError();
}

__device__ size_t At(int row, int stride) { return static_cast<size_t>(row) * stride; }

// ------------------------------------------------------------ dense algebra

__global__ void FillKernel(size_t n, float* x, float value) { HERALD_GRID_LOOP(i, n) x[i] = value; }

__global__ void ScaleMatrixKernel(size_t total, float* c, int n, int ldc, float beta) {
  HERALD_GRID_LOOP(i, total) {
    const int r = static_cast<int>(i / n), col = static_cast<int>(i % n);
    c[At(r, ldc) + col] *= beta;
  }
}

__global__ void AxpyKernel(size_t n, float alpha, const float* x, float* y) {
  HERALD_GRID_LOOP(i, n) y[i] += alpha * x[i];
}

__global__ void AddRowVectorKernel(size_t total, const float* bias, int cols, float* y) {
  HERALD_GRID_LOOP(i, total) y[i] += bias[i % cols];
}

// One thread per column, rows in ascending order.
// One thread per (block of `block` rows, column): the block's sum in
// ascending row order (Device::SumRows).
__global__ void SumRowBlocksKernel(size_t total, const float* x, int rows, int cols, int block,
                                   float* block_sums) {
  HERALD_GRID_LOOP(t, total) {
    const int b = static_cast<int>(t / cols), c = static_cast<int>(t % cols);
    const int end = min(rows, (b + 1) * block);
    float s = 0.0f;
    for (int r = b * block; r < end; ++r) s += x[At(r, cols) + c];
    block_sums[t] = s;
  }
}

// One thread per column: the blocks' sums in ascending block order.
__global__ void SumBlocksKernel(size_t cols, const float* block_sums, int blocks, float* out) {
  HERALD_GRID_LOOP(c, cols) {
    float s = 0.0f;
    for (int b = 0; b < blocks; ++b) s += block_sums[At(b, static_cast<int>(cols)) + c];
    out[c] = s;
  }
}

__global__ void Add2DKernel(size_t total, const float* from, int from_stride, int cols, float* to,
                            int to_stride) {
  HERALD_GRID_LOOP(i, total) {
    const int r = static_cast<int>(i / cols), c = static_cast<int>(i % cols);
    to[At(r, to_stride) + c] += from[At(r, from_stride) + c];
  }
}

// ------------------------------------------------------------ elementwise

// The CPU's own rules (worker/device/elementwise_rules.h).

__global__ void ReluKernel(size_t n, const float* x, float* y) {
  HERALD_GRID_LOOP(i, n) y[i] = ReluOf(x[i]);
}

__global__ void ReluBackwardKernel(size_t n, const float* y, const float* dy, float* dx) {
  HERALD_GRID_LOOP(i, n) dx[i] += ReluGradient(y[i], dy[i]);
}

__global__ void SigmoidKernel(size_t n, const float* x, float* y) {
  HERALD_GRID_LOOP(i, n) y[i] = SigmoidOf(x[i]);
}

__global__ void SigmoidCrossEntropyKernel(size_t n, const float* logits, const float* labels,
                                          float grad_scale, float* losses, float* dlogits) {
  HERALD_GRID_LOOP(i, n) {
    SigmoidCrossEntropyOf(logits[i], labels[i], grad_scale, &losses[i], &dlogits[i]);
  }
}

__global__ void SquaredErrorKernel(size_t n, const float* outputs, const float* labels,
                                   float grad_scale, float* losses, float* doutputs) {
  HERALD_GRID_LOOP(i, n) {
    SquaredErrorOf(outputs[i], labels[i], grad_scale, &losses[i], &doutputs[i]);
  }
}

__global__ void Multiply2DKernel(size_t total, const float* a, int a_stride, const float* b,
                                 int b_stride, int cols, float* out, int out_stride,
                                 bool accumulate) {
  HERALD_GRID_LOOP(i, total) {
    const int r = static_cast<int>(i / cols), c = static_cast<int>(i % cols);
    float* o = out + At(r, out_stride) + c;
    *o = (accumulate ? *o : 0.0f) + a[At(r, a_stride) + c] * b[At(r, b_stride) + c];
  }
}

__global__ void AddScaledRowsKernel(size_t total, const float* s, const float* x, int x_stride,
                                    int cols, float* y, int y_stride) {
  HERALD_GRID_LOOP(i, total) {
    const int r = static_cast<int>(i / cols), c = static_cast<int>(i % cols);
    y[At(r, y_stride) + c] += s[r] * x[At(r, x_stride) + c];
  }
}

// One thread per 4 units of a row.
__global__ void DropoutMaskKernel(size_t total, uint64_t key, uint64_t iteration,
                                  const uint32_t* samples, int width, int blocks, float p,
                                  float keep_scale, float* mask) {
  HERALD_GRID_LOOP(i, total) {
    const int r = static_cast<int>(i / blocks), b = static_cast<int>(i % blocks);
    const uint32_t sample = samples != nullptr ? samples[r] : static_cast<uint32_t>(r);
    const PhiloxBlock bits = DropoutBits(key, iteration, sample, static_cast<uint32_t>(b));
    float* row = mask + At(r, width);
    for (int j = 0; j < 4 && 4 * b + j < width; ++j) {
      row[4 * b + j] = DropoutScaleOf(bits.v[j], p, keep_scale);
    }
  }
}

// One thread per row, columns in ascending order.
__global__ void RowDotsKernel(size_t rows, const float* a, int a_stride, const float* b,
                              int b_stride, int cols, float* out) {
  HERALD_GRID_LOOP(r, rows) {
    const float* ar = a + At(static_cast<int>(r), a_stride);
    const float* br = b + At(static_cast<int>(r), b_stride);
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += ar[c] * br[c];
    out[r] = s;
  }
}

// ------------------------------------------------------------ interactions

__global__ void FmForwardKernel(size_t rows, const float* x, int x_stride, int fields, int dim,
                                float* out) {
  HERALD_GRID_LOOP(r, rows) out[r] = FmOfRow(x + At(static_cast<int>(r), x_stride), fields, dim);
}

// One thread per (row, k).
__global__ void FmBackwardKernel(size_t total, const float* x, int x_stride, const float* dout,
                                 int fields, int dim, float* dx, int dx_stride) {
  HERALD_GRID_LOOP(i, total) {
    const int r = static_cast<int>(i / dim), k = static_cast<int>(i % dim);
    const float* xr = x + At(r, x_stride);
    float* dr = dx + At(r, dx_stride);
    float sum = 0.0f;
    for (int f = 0; f < fields; ++f) sum += xr[f * dim + k];
    for (int f = 0; f < fields; ++f) dr[f * dim + k] += dout[r] * (sum - xr[f * dim + k]);
  }
}

// One thread per (row, pair); pair p = (a, b) in the order (1,0), (2,0), (2,1), ...
__global__ void DotForwardKernel(size_t total, const float* x, int x_stride, int pairs, int dim,
                                 float* out, int out_stride) {
  HERALD_GRID_LOOP(i, total) {
    const int r = static_cast<int>(i / pairs), p = static_cast<int>(i % pairs);
    int a = 1, b = p;
    while (b >= a) {
      b -= a;
      ++a;
    }
    const float* xr = x + At(r, x_stride);
    float s = 0.0f;
    for (int k = 0; k < dim; ++k) s += xr[a * dim + k] * xr[b * dim + k];
    out[At(r, out_stride) + p] = s;
  }
}

// One thread per (row, field, k): the pairs touching the field, in pair
// order, as the CPU loop adds them.
__global__ void DotBackwardKernel(size_t total, const float* x, int x_stride, const float* dout,
                                  int dout_stride, int fields, int dim, float* dx, int dx_stride) {
  HERALD_GRID_LOOP(i, total) {
    const int per_row = fields * dim;
    const int r = static_cast<int>(i / per_row);
    const int f = static_cast<int>(i % per_row) / dim, k = static_cast<int>(i % dim);
    const float* xr = x + At(r, x_stride);
    const float* g = dout + At(r, dout_stride);
    float* target = dx + At(r, dx_stride) + f * dim + k;
    float acc = *target;
    int p = 0;
    for (int a = 1; a < fields; ++a) {
      for (int b = 0; b < a; ++b, ++p) {
        if (a == f) acc += g[p] * xr[b * dim + k];
        if (b == f) acc += g[p] * xr[a * dim + k];
      }
    }
    *target = acc;
  }
}

// ------------------------------------------------------------ embeddings

// W floats of a row at once: W = 4 is one 16-byte access (every pointer
// and offset a multiple of 4 floats), W = 1 one float. Each float's
// arithmetic is the same either way.
template <int W>
struct RowFloats;
template <>
struct RowFloats<1> {
  __device__ static void Load(const float* p, float* v) { v[0] = p[0]; }
  __device__ static void Store(float* p, const float* v) { p[0] = v[0]; }
};
template <>
struct RowFloats<4> {
  __device__ static void Load(const float* p, float* v) {
    const float4 x = *reinterpret_cast<const float4*>(p);
    v[0] = x.x;
    v[1] = x.y;
    v[2] = x.z;
    v[3] = x.w;
  }
  __device__ static void Store(float* p, const float* v) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  }
};

// Block (x: groups of W floats of a row, y: bags or entries); grid (x:
// bags or entries, y: tables). No thread divides an index.
// Thread (group, bag) of table blockIdx.y: floats [W * group, W * group + W)
// of the bag, added in entry order, then scaled.
template <int W>
__global__ void BagsForwardKernel(const BagTableArgs* tables, int count, uint32_t n,
                                  uint32_t groups, float* out, int out_stride) {
  for (int ti = blockIdx.y; ti < count; ti += gridDim.y) {
    const BagTableArgs& t = tables[ti];
    for (uint32_t i = blockIdx.x * blockDim.y + threadIdx.y; i < n; i += gridDim.x * blockDim.y) {
      const uint32_t begin = t.offsets[i], end = t.offsets[i + 1];
      const float scale = t.pooling != 0 && end > begin
                              ? PoolingScale(static_cast<Pooling>(t.pooling), end - begin)
                              : 1.0f;
      for (uint32_t group = threadIdx.x; group < groups; group += blockDim.x) {
        const int d = static_cast<int>(group) * W;
        if (d >= t.dim) break;
        float o[W], r[W];
        for (int k = 0; k < W; ++k) o[k] = 0.0f;
        if (t.weights != nullptr) {
          for (uint32_t j = begin; j < end; ++j) {
            RowFloats<W>::Load(t.rows + static_cast<size_t>(t.slots[j]) * t.row_stride + d, r);
            const float w = t.weights[j];
            for (int k = 0; k < W; ++k) o[k] += w * r[k];
          }
        } else {
          for (uint32_t j = begin; j < end; ++j) {
            RowFloats<W>::Load(t.rows + static_cast<size_t>(t.slots[j]) * t.row_stride + d, r);
            for (int k = 0; k < W; ++k) o[k] += r[k];
          }
        }
        if (t.pooling != 0 && end > begin) {
          for (int k = 0; k < W; ++k) o[k] *= scale;
        }
        RowFloats<W>::Store(out + At(static_cast<int>(i), out_stride) + t.column + d, o);
      }
    }
  }
}

// Thread x of table blockIdx.y: its bags' entries.
__global__ void BagEntriesKernel(const BagTableArgs* tables, int count, uint32_t n, uint32_t* keys,
                                 uint32_t* positions, uint32_t* bag_of_position) {
  for (int ti = blockIdx.y; ti < count; ti += gridDim.y) {
    const BagTableArgs& t = tables[ti];
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
      for (uint32_t j = t.offsets[i]; j < t.offsets[i + 1]; ++j) {
        const uint32_t e = t.entry_base + j;
        keys[e] = t.slot_base + t.slots[j];
        positions[e] = e;
        bag_of_position[e] = i;
      }
    }
  }
}

// The table that holds item `at` of all tables' items, each table's first
// item in its field `base` (ascending over the tables): the last table
// whose base is <= at.
template <typename Args, typename Base>
__device__ int TableHolding(const Args* tables, int count, Base Args::*base, uint64_t at) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<uint64_t>(tables[mid].*base) <= at) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The table whose keys hold `key`: the last with slot_base <= key.
__device__ int TableOfKey(const BagTableArgs* tables, int count, uint32_t key) {
  return TableHolding(tables, count, &BagTableArgs::slot_base, key);
}

// Thread (group, sorted entry): only the first entry of each key's run
// works, adding the run's bag gradients to floats [W * group, W * group +
// W) in ascending position order (the CPU's order).
template <int W>
__global__ void AccumulateTablesKernel(const BagTableArgs* tables, int count, const float* dout,
                                       int dout_stride, const uint32_t* sorted_keys,
                                       const uint32_t* sorted_positions,
                                       const uint32_t* bag_of_position, uint32_t entries,
                                       uint32_t groups) {
  for (uint32_t j = blockIdx.x * blockDim.y + threadIdx.y; j < entries;
       j += gridDim.x * blockDim.y) {
    const uint32_t key = sorted_keys[j];
    if (j > 0 && sorted_keys[j - 1] == key) continue;
    const BagTableArgs& t = tables[TableOfKey(tables, count, key)];
    for (uint32_t group = threadIdx.x; group < groups; group += blockDim.x) {
      const int d = static_cast<int>(group) * W;
      if (d >= t.dim) break;
      float* target = t.grads + static_cast<size_t>(key - t.slot_base) * t.grad_stride + d;
      float acc[W], grad[W];
      RowFloats<W>::Load(target, acc);
      for (uint32_t e = j; e < entries && sorted_keys[e] == key; ++e) {
        const uint32_t position = sorted_positions[e];
        const uint32_t i = bag_of_position[position];
        RowFloats<W>::Load(dout + At(static_cast<int>(i), dout_stride) + t.column + d, grad);
        if (t.pooling != 0) {
          const float scale =
              PoolingScale(static_cast<Pooling>(t.pooling), t.offsets[i + 1] - t.offsets[i]);
          for (int k = 0; k < W; ++k) grad[k] *= scale;
        }
        // The CPU's order: (dout · scale) · weight.
        if (t.weights != nullptr) {
          const float w = t.weights[position - t.entry_base];
          for (int k = 0; k < W; ++k) grad[k] *= w;
        }
        for (int k = 0; k < W; ++k) acc[k] += grad[k];
      }
      RowFloats<W>::Store(target, acc);
    }
  }
}

__global__ void GatherRowsKernel(size_t total, const float* rows, int row_stride,
                                 const uint32_t* slots, int width, float* out) {
  HERALD_GRID_LOOP(t, total) {
    const size_t i = t / width, w = t % width;
    out[t] = rows[static_cast<size_t>(slots[i]) * row_stride + w];
  }
}

__global__ void ScatterRowsKernel(size_t total, const float* in, const uint32_t* slots, int width,
                                  int row_stride, float* rows) {
  HERALD_GRID_LOOP(t, total) {
    const size_t i = t / width, w = t % width;
    rows[static_cast<size_t>(slots[i]) * row_stride + w] = in[t];
  }
}

__global__ void ZeroRowsKernel(size_t total, const uint32_t* slots, int width, int row_stride,
                               float* rows) {
  HERALD_GRID_LOOP(t, total) {
    const size_t i = t / width, w = t % width;
    rows[static_cast<size_t>(slots[i]) * row_stride + w] = 0.0f;
  }
}

// Float f of every table's moved floats: its table is the last whose
// float_base is <= f.
__global__ void MoveRowsOfTablesKernel(size_t total, RowMove move, const RowMoveArgs* tables,
                                       int count) {
  HERALD_GRID_LOOP(f, total) {
    const RowMoveArgs& t = tables[TableHolding(tables, count, &RowMoveArgs::float_base, f)];
    const size_t local = f - t.float_base;
    const size_t i = local / t.width, w = local % t.width;
    float* at = t.rows + static_cast<size_t>(t.slots[i]) * t.row_stride + w;
    if (move == kGatherRows) {
      t.packed[local] = *at;
    } else if (move == kScatterRows) {
      *at = t.packed[local];
    } else {
      *at = 0.0f;
    }
  }
}

// ------------------------------------------------------------ optimizers
// The rules of common/math/optimizer_rules.h, the CPU's own, element by
// element.

using math::SparseOptimizerKind;

__global__ void FlatOptimizerKernel(size_t n, OptimizerParams c, const float* grad, float* values,
                                    float* state) {
  HERALD_GRID_LOOP(i, n) {
    switch (c.kind) {
      case SparseOptimizerKind::kSgd:
        math::SgdRule(c, grad[i], &values[i]);
        break;
      case SparseOptimizerKind::kAdagrad:
        math::AdagradRule(c, grad[i], &values[i], &state[i]);
        break;
      case SparseOptimizerKind::kAdam: {
        const uint32_t step = __float_as_uint(state[2 * n]) + 1;
        math::AdamRule(c, math::AdamBiasAt(c, step), grad[i], &values[i], &state[i], &state[n + i]);
        break;
      }
      case SparseOptimizerKind::kRowwiseAdagrad:
        break;  // RowwiseAccumulateKernel and RowwiseApplyKernel
    }
  }
}

// Single thread: Adam's step counter of a flat vector, after its elements.
__global__ void IncrementStepKernel(float* step_slot) {
  *step_slot = __uint_as_float(__float_as_uint(*step_slot) + 1);
}

// Single thread: row-wise Adagrad's accumulator of a flat vector (the sum of
// squares in index order, as the CPU does).
__global__ void RowwiseAccumulateKernel(size_t n, OptimizerParams c, const float* grad,
                                        float* state) {
  float sum_sq = 0.0f;
  for (size_t i = 0; i < n; ++i) sum_sq = sum_sq + grad[i] * grad[i];
  math::RowwiseAdagradAccumulate(c, sum_sq, static_cast<uint32_t>(n), &state[0]);
}

__global__ void RowwiseApplyKernel(size_t n, OptimizerParams c, const float* grad, float* values,
                                   const float* state) {
  HERALD_GRID_LOOP(i, n) {
    math::RowwiseAdagradRule(c, grad[i], math::RowwiseAdagradDenominator(c, state[0]), &values[i]);
  }
}

// One row's optimizer step by one thread block; with `consume`, each
// gradient float is zeroed by the thread that used it last.
__device__ void UpdateRow(const OptimizerParams& c, int dim, uint32_t slot, float* grads,
                          int grad_stride, float* rows, int row_stride, bool consume) {
  float* w = rows + static_cast<size_t>(slot) * row_stride;
  float* g = grads + static_cast<size_t>(slot) * grad_stride;
  float* state = w + dim;
  switch (c.kind) {
    case SparseOptimizerKind::kSgd:
      for (int i = threadIdx.x; i < dim; i += blockDim.x) math::SgdRule(c, g[i], &w[i]);
      break;
    case SparseOptimizerKind::kAdagrad:
      for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        math::AdagradRule(c, g[i], &w[i], &state[i]);
      }
      break;
    case SparseOptimizerKind::kRowwiseAdagrad: {
      __shared__ float denominator;
      if (threadIdx.x == 0) {
        float sum_sq = 0.0f;
        for (int i = 0; i < dim; ++i) sum_sq = sum_sq + g[i] * g[i];
        denominator =
            math::RowwiseAdagradAccumulate(c, sum_sq, static_cast<uint32_t>(dim), &state[0]);
      }
      __syncthreads();
      for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        math::RowwiseAdagradRule(c, g[i], denominator, &w[i]);
      }
      break;
    }
    case SparseOptimizerKind::kAdam: {
      const uint32_t step = __float_as_uint(state[2 * dim]) + 1;
      __syncthreads();  // every thread has read the old step
      if (threadIdx.x == 0) state[2 * dim] = __uint_as_float(step);
      const math::AdamBias bias = math::AdamBiasAt(c, step);
      for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        math::AdamRule(c, bias, g[i], &w[i], &state[i], &state[dim + i]);
      }
      break;
    }
  }
  if (consume) {
    for (int i = threadIdx.x; i < dim; i += blockDim.x) g[i] = 0.0f;
  }
}

// One block per listed row.
__global__ void RowUpdatesKernel(OptimizerParams c, int dim, const uint32_t* slots, float* grads,
                                 int grad_stride, float* rows, int row_stride) {
  UpdateRow(c, dim, slots[blockIdx.x], grads, grad_stride, rows, row_stride, false);
}

// One block per listed row of every table; the block's table is the last
// whose row_base is <= the block.
__global__ void TableRowUpdatesKernel(const RowUpdateArgs* tables, int count) {
  const RowUpdateArgs& t =
      tables[TableHolding(tables, count, &RowUpdateArgs::row_base, blockIdx.x)];
  UpdateRow(t.optimizer, t.dim, t.slots[blockIdx.x - t.row_base], t.grads, t.dim, t.rows,
            t.row_stride, true);
}

}  // namespace

int Fill(Stream stream, float* x, size_t n, float value) {
  return Launch(stream, n, FillKernel, x, value);
}

int ScaleMatrix(Stream stream, float* c, int m, int n, int ldc, float beta) {
  return Launch(stream, static_cast<size_t>(m) * n, ScaleMatrixKernel, c, n, ldc, beta);
}

int Axpy(Stream stream, size_t n, float alpha, const float* x, float* y) {
  return Launch(stream, n, AxpyKernel, alpha, x, y);
}

int AddRowVector(Stream stream, const float* bias, int rows, int cols, float* y) {
  return Launch(stream, static_cast<size_t>(rows) * cols, AddRowVectorKernel, bias, cols, y);
}

int SumRows(Stream stream, const float* x, int rows, int cols, int block, float* block_sums,
            float* out) {
  const int blocks = (rows + block - 1) / block;
  if (blocks <= 1) {  // one block: its sum is the result
    return Launch(stream, static_cast<size_t>(cols), SumRowBlocksKernel, x, rows, cols, block, out);
  }
  const int launched = Launch(stream, static_cast<size_t>(blocks) * cols, SumRowBlocksKernel, x,
                              rows, cols, block, block_sums);
  if (launched != 0) return launched;
  return Launch(stream, static_cast<size_t>(cols), SumBlocksKernel, block_sums, blocks, out);
}

int Add2D(Stream stream, const float* from, int from_stride, int rows, int cols, float* to,
          int to_stride) {
  return Launch(stream, static_cast<size_t>(rows) * cols, Add2DKernel, from, from_stride, cols, to,
                to_stride);
}

int Relu(Stream stream, const float* x, size_t n, float* y) {
  return Launch(stream, n, ReluKernel, x, y);
}

int ReluBackward(Stream stream, const float* y, const float* dy, size_t n, float* dx) {
  return Launch(stream, n, ReluBackwardKernel, y, dy, dx);
}

int Sigmoid(Stream stream, const float* x, size_t n, float* y) {
  return Launch(stream, n, SigmoidKernel, x, y);
}

int SquaredError(Stream stream, const float* outputs, const float* labels, int n, float grad_scale,
                 float* losses, float* doutputs) {
  return Launch(stream, static_cast<size_t>(n), SquaredErrorKernel, outputs, labels, grad_scale,
                losses, doutputs);
}

int SigmoidCrossEntropy(Stream stream, const float* logits, const float* labels, int n,
                        float grad_scale, float* losses, float* dlogits) {
  return Launch(stream, static_cast<size_t>(n), SigmoidCrossEntropyKernel, logits, labels,
                grad_scale, losses, dlogits);
}

int Multiply2D(Stream stream, const float* a, int a_stride, const float* b, int b_stride, int rows,
               int cols, float* out, int out_stride, bool accumulate) {
  return Launch(stream, static_cast<size_t>(rows) * cols, Multiply2DKernel, a, a_stride, b,
                b_stride, cols, out, out_stride, accumulate);
}

int AddScaledRows(Stream stream, const float* s, const float* x, int x_stride, int rows, int cols,
                  float* y, int y_stride) {
  return Launch(stream, static_cast<size_t>(rows) * cols, AddScaledRowsKernel, s, x, x_stride, cols,
                y, y_stride);
}

int RowDots(Stream stream, const float* a, int a_stride, const float* b, int b_stride, int rows,
            int cols, float* out) {
  return Launch(stream, static_cast<size_t>(rows), RowDotsKernel, a, a_stride, b, b_stride, cols,
                out);
}

int DropoutMask(Stream stream, uint64_t key, uint64_t iteration, const uint32_t* samples, int rows,
                int width, float p, float keep_scale, float* mask) {
  const int blocks = (width + 3) / 4;
  return Launch(stream, static_cast<size_t>(rows) * blocks, DropoutMaskKernel, key, iteration,
                samples, width, blocks, p, keep_scale, mask);
}

int FmForward(Stream stream, const float* x, int x_stride, int rows, int fields, int dim,
              float* out) {
  return Launch(stream, static_cast<size_t>(rows), FmForwardKernel, x, x_stride, fields, dim, out);
}

int FmBackward(Stream stream, const float* x, int x_stride, const float* dout, int rows, int fields,
               int dim, float* dx, int dx_stride) {
  return Launch(stream, static_cast<size_t>(rows) * dim, FmBackwardKernel, x, x_stride, dout,
                fields, dim, dx, dx_stride);
}

int DotInteractionForward(Stream stream, const float* x, int x_stride, int rows, int fields,
                          int dim, float* out, int out_stride) {
  const int pairs = fields * (fields - 1) / 2;
  return Launch(stream, static_cast<size_t>(rows) * pairs, DotForwardKernel, x, x_stride, pairs,
                dim, out, out_stride);
}

int DotInteractionBackward(Stream stream, const float* x, int x_stride, const float* dout,
                           int dout_stride, int rows, int fields, int dim, float* dx,
                           int dx_stride) {
  return Launch(stream, static_cast<size_t>(rows) * fields * dim, DotBackwardKernel, x, x_stride,
                dout, dout_stride, fields, dim, dx, dx_stride);
}

// The block and grid of a bag kernel: threads over `groups` in x (a power
// of two, at most 64), over bags or entries in y (256 threads in all);
// blocks over `items` in x, over `count` tables in y.
struct BagGrid {
  dim3 grid, block;
};
BagGrid GridOf(uint32_t groups, size_t items, int count) {
  unsigned x = 1;
  while (x < groups && x < 64) x *= 2;
  const unsigned y = kThreads / x;
  const size_t blocks = std::min<size_t>((items + y - 1) / y, kMaxBlocks);
  return {dim3(static_cast<unsigned>(std::max<size_t>(blocks, 1)),
               static_cast<unsigned>(std::min<int>(count, 65535)), 1),
          dim3(x, y, 1)};
}

int EmbeddingBagsForward(Stream stream, const BagTableArgs* tables, int count, int n, int max_dim,
                         int width, float* out, int out_stride) {
  if (n <= 0 || count <= 0 || max_dim <= 0) return 0;
  const uint32_t groups = static_cast<uint32_t>((max_dim + width - 1) / width);
  const BagGrid g = GridOf(groups, static_cast<size_t>(n), count);
  if (width == 4) {
    BagsForwardKernel<4><<<g.grid, g.block, 0, stream>>>(tables, count, static_cast<uint32_t>(n),
                                                         groups, out, out_stride);
  } else {
    BagsForwardKernel<1><<<g.grid, g.block, 0, stream>>>(tables, count, static_cast<uint32_t>(n),
                                                         groups, out, out_stride);
  }
  return LastError();
}

int BagEntries(Stream stream, const BagTableArgs* tables, int count, int n, uint32_t* keys,
               uint32_t* positions, uint32_t* bag_of_position) {
  if (n <= 0 || count <= 0) return 0;
  const dim3 grid(Blocks(static_cast<size_t>(n)), static_cast<unsigned>(std::min(count, 65535)));
  BagEntriesKernel<<<grid, kThreads, 0, stream>>>(tables, count, static_cast<uint32_t>(n), keys,
                                                  positions, bag_of_position);
  return LastError();
}

int SortByKey(Stream stream, void* temp, size_t* temp_bytes, const uint32_t* keys_in,
              uint32_t* keys_out, const uint32_t* positions_in, uint32_t* positions_out,
              uint32_t entries, int bits) {
  return static_cast<int>(
      cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, keys_in, keys_out, positions_in,
                                      positions_out, static_cast<int>(entries), 0, bits, stream));
}

int AccumulateSortedTables(Stream stream, const BagTableArgs* tables, int count, const float* dout,
                           int dout_stride, const uint32_t* sorted_keys,
                           const uint32_t* sorted_positions, const uint32_t* bag_of_position,
                           uint32_t entries, int max_dim, int width) {
  if (entries == 0 || max_dim <= 0) return 0;
  const uint32_t groups = static_cast<uint32_t>((max_dim + width - 1) / width);
  BagGrid g = GridOf(groups, entries, 1);
  if (width == 4) {
    AccumulateTablesKernel<4><<<g.grid, g.block, 0, stream>>>(tables, count, dout, dout_stride,
                                                              sorted_keys, sorted_positions,
                                                              bag_of_position, entries, groups);
  } else {
    AccumulateTablesKernel<1><<<g.grid, g.block, 0, stream>>>(tables, count, dout, dout_stride,
                                                              sorted_keys, sorted_positions,
                                                              bag_of_position, entries, groups);
  }
  return LastError();
}

int GatherRows(Stream stream, const float* rows, int row_stride, const uint32_t* slots, int n,
               int width, float* out) {
  return Launch(stream, static_cast<size_t>(n) * width, GatherRowsKernel, rows, row_stride, slots,
                width, out);
}

int ScatterRows(Stream stream, const float* in, const uint32_t* slots, int n, int width,
                int row_stride, float* rows) {
  return Launch(stream, static_cast<size_t>(n) * width, ScatterRowsKernel, in, slots, width,
                row_stride, rows);
}

int ZeroRows(Stream stream, const uint32_t* slots, int n, int width, int row_stride, float* rows) {
  return Launch(stream, static_cast<size_t>(n) * width, ZeroRowsKernel, slots, width, row_stride,
                rows);
}

int ApplyOptimizer(Stream stream, const OptimizerParams& config, size_t n, const float* grad,
                   float* values, float* state) {
  if (n == 0) return 0;
  if (config.kind == math::SparseOptimizerKind::kRowwiseAdagrad) {
    RowwiseAccumulateKernel<<<1, 1, 0, stream>>>(n, config, grad, state);
    return Launch(stream, n, RowwiseApplyKernel, config, grad, values,
                  static_cast<const float*>(state));
  }
  const int launched = Launch(stream, n, FlatOptimizerKernel, config, grad, values, state);
  if (launched != 0 || config.kind != math::SparseOptimizerKind::kAdam) return launched;
  IncrementStepKernel<<<1, 1, 0, stream>>>(state + 2 * n);
  return LastError();
}

int ApplyRowUpdates(Stream stream, const OptimizerParams& config, int dim, const uint32_t* slots,
                    int n, const float* grads, int grad_stride, float* rows, int row_stride) {
  if (n == 0 || dim == 0) return 0;
  const int threads = std::min(128, ((dim + 31) / 32) * 32);
  // The kernel only reads `grads` (consume = false).
  RowUpdatesKernel<<<static_cast<unsigned>(n), threads, 0, stream>>>(
      config, dim, slots, const_cast<float*>(grads), grad_stride, rows, row_stride);
  return LastError();
}

int MoveRowsOfTables(Stream stream, RowMove move, const RowMoveArgs* tables, int count,
                     uint64_t total) {
  if (count == 0) return 0;
  return Launch(stream, static_cast<size_t>(total), MoveRowsOfTablesKernel, move, tables, count);
}

int ApplyRowUpdatesAndZero(Stream stream, const RowUpdateArgs* tables, int count, uint32_t rows,
                           int max_dim) {
  if (rows == 0 || max_dim == 0) return 0;
  const int threads = std::min(128, ((max_dim + 31) / 32) * 32);
  TableRowUpdatesKernel<<<rows, threads, 0, stream>>>(tables, count);
  return LastError();
}

}  // namespace herald::worker::cuda
