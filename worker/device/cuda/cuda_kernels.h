#pragma once
// Launchers of the CUDA kernels behind CudaDevice (cuda_device.h), one per
// Device operation that is not a cuBLAS call or a copy. Each enqueues its
// kernel on `stream` and returns the launch error (cudaSuccess = 0 as int),
// so this header needs no CUDA header. Pointers are device memory.
//
// Exactness contract (built with --fmad=false, IEEE division and square
// root): every kernel adds in the same order as CpuDevice's loops, so the
// results equal the CPU's bit for bit, except where a transcendental
// function is involved (exp, log1p: Sigmoid, SigmoidCrossEntropy), where
// CUDA's libm may differ by a few ulp. The optimizers run the CPU's own
// rules (common/math/optimizer_rules.h, compiled by nvcc too), Adam's bias
// correction by math::PowerOf's double multiplies, not powf: bitwise.

#include <cstddef>
#include <cstdint>

#include "common/math/optimizer_rules.h"

struct CUstream_st;

namespace herald::worker::cuda {

using Stream = CUstream_st*;

// The optimizers' configuration and rules, shared with the CPU
// (common/math/optimizer_rules.h).
using OptimizerParams = math::SparseOptimizerConfig;

int Fill(Stream stream, float* x, size_t n, float value);
// c[r, c] *= beta for an m×n block with row stride ldc.
int ScaleMatrix(Stream stream, float* c, int m, int n, int ldc, float beta);
int Axpy(Stream stream, size_t n, float alpha, const float* x, float* y);
int AddRowVector(Stream stream, const float* bias, int rows, int cols, float* y);
// Device::SumRows in two launches: each block of `block` rows, then the
// blocks (block_sums: scratch of ⌈rows / block⌉ · cols floats).
int SumRows(Stream stream, const float* x, int rows, int cols, int block, float* block_sums,
            float* out);
int Add2D(Stream stream, const float* from, int from_stride, int rows, int cols, float* to,
          int to_stride);

int Relu(Stream stream, const float* x, size_t n, float* y);
int ReluBackward(Stream stream, const float* y, const float* dy, size_t n, float* dx);
int Sigmoid(Stream stream, const float* x, size_t n, float* y);
int SquaredError(Stream stream, const float* outputs, const float* labels, int n, float grad_scale,
                 float* losses, float* doutputs);
int SigmoidCrossEntropy(Stream stream, const float* logits, const float* labels, int n,
                        float grad_scale, float* losses, float* dlogits);
int Multiply2D(Stream stream, const float* a, int a_stride, const float* b, int b_stride, int rows,
               int cols, float* out, int out_stride, bool accumulate);
int AddScaledRows(Stream stream, const float* s, const float* x, int x_stride, int rows, int cols,
                  float* y, int y_stride);
int RowDots(Stream stream, const float* a, int a_stride, const float* b, int b_stride, int rows,
            int cols, float* out);

// One thread per 4 units of a row (dropout_rules.h).
int DropoutMask(Stream stream, uint64_t key, uint64_t iteration, const uint32_t* samples, int rows,
                int width, float p, float keep_scale, float* mask);

int FmForward(Stream stream, const float* x, int x_stride, int rows, int fields, int dim,
              float* out);
int FmBackward(Stream stream, const float* x, int x_stride, const float* dout, int rows, int fields,
               int dim, float* dx, int dx_stride);
int DotInteractionForward(Stream stream, const float* x, int x_stride, int rows, int fields,
                          int dim, float* out, int out_stride);
int DotInteractionBackward(Stream stream, const float* x, int x_stride, const float* dout,
                           int dout_stride, int rows, int fields, int dim, float* dx,
                           int dx_stride);

// Every table of a model at once (Device::EmbeddingBagsForward/Backward):
// one table's arguments, in device memory, an array per call.
struct BagTableArgs {
  const float* rows;
  const uint32_t* offsets;  // n + 1
  const uint32_t* slots;
  const float* weights;  // per entry; null: each weighs 1
  float* grads;          // dim floats per slot
  uint32_t entry_base;   // the table's first entry among all tables' entries
  uint32_t slot_base;    // the table's first key in one key space of all tables' slots
  int row_stride;
  int dim;
  int grad_stride;  // floats between slots of grads
  int column;       // in out / dout
  int pooling;      // worker::Pooling
};
// out[i, column + d] of every table in one launch (max_dim: the largest
// dim). width: floats a thread moves at once, 4 only where every table's
// dim, row stride, column and rows, and out and out_stride, are multiples
// of 4 floats (16-byte accesses), else 1; the results are the same bits.
int EmbeddingBagsForward(Stream stream, const BagTableArgs* tables, int count, int n, int max_dim,
                         int width, float* out, int out_stride);
// Deterministic backward of every table with one sort (the caller owns
// the scratch, sized by the number of (bag, slot) entries of all tables):
// entry e of table t gets the key slot_base + slot, so one stable sort of
// (key, position) groups each slot of each table with its positions
// ascending, and one launch adds each run's bag gradients in the CPU's
// order.
//  1 BagEntries: keys, positions (identity) and bag of every entry;
//  2 SortByKey: a stable radix sort of (key, position) over key bits [0, bits);
//  3 AccumulateSortedTables: one thread per (sorted entry, group of `width`
//    floats < max_dim); width 4 only where every table's dim, grad stride,
//    column and grads, and dout and dout_stride, are multiples of 4 floats.
int BagEntries(Stream stream, const BagTableArgs* tables, int count, int n, uint32_t* keys,
               uint32_t* positions, uint32_t* bag_of_position);
int SortByKey(Stream stream, void* temp, size_t* temp_bytes, const uint32_t* keys_in,
              uint32_t* keys_out, const uint32_t* positions_in, uint32_t* positions_out,
              uint32_t entries, int bits);
int AccumulateSortedTables(Stream stream, const BagTableArgs* tables, int count, const float* dout,
                           int dout_stride, const uint32_t* sorted_keys,
                           const uint32_t* sorted_positions, const uint32_t* bag_of_position,
                           uint32_t entries, int max_dim, int width);

int GatherRows(Stream stream, const float* rows, int row_stride, const uint32_t* slots, int n,
               int width, float* out);
int ScatterRows(Stream stream, const float* in, const uint32_t* slots, int n, int width,
                int row_stride, float* rows);
int ZeroRows(Stream stream, const uint32_t* slots, int n, int width, int row_stride, float* rows);

// Every table's rows of a batched row move (Device::GatherRowsOfTables,
// ScatterRowsOfTables, ZeroRowsOfTables) in one launch: one table's
// arguments, in device memory, an array per call, tables of at least one
// float only.
struct RowMoveArgs {
  float* rows;
  const uint32_t* slots;
  float* packed;
  uint64_t float_base;  // the table's first float among all tables' moved floats
  int row_stride;
  int width;
};
enum RowMove { kGatherRows = 0, kScatterRows = 1, kZeroRows = 2 };
// One thread per moved float (`total`: Σ the tables' n × width).
int MoveRowsOfTables(Stream stream, RowMove move, const RowMoveArgs* tables, int count,
                     uint64_t total);

// One optimizer step on a flat vector of n values (state as in
// common/math/sparse_optimizer.h with dim = n).
int ApplyOptimizer(Stream stream, const OptimizerParams& config, size_t n, const float* grad,
                   float* values, float* state);
// One step on each listed row (one thread block per row).
int ApplyRowUpdates(Stream stream, const OptimizerParams& config, int dim, const uint32_t* slots,
                    int n, const float* grads, int grad_stride, float* rows, int row_stride);
// Every table's rows in one launch (Device::ApplyRowUpdatesAndZero): one
// table's arguments, in device memory, an array per call.
struct RowUpdateArgs {
  OptimizerParams optimizer;
  int dim;
  const uint32_t* slots;
  float* grads;  // dim floats per slot; zeroed after the update
  float* rows;
  int row_stride;
  uint32_t row_base;  // the table's first block: rows of the tables before
};
// `rows`: Σ the tables' rows (one block each), at most 2^31 - 1.
int ApplyRowUpdatesAndZero(Stream stream, const RowUpdateArgs* tables, int count, uint32_t rows,
                           int max_dim);

}  // namespace herald::worker::cuda
