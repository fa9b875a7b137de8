#pragma once
// The small compute interface the model code is written against, so that one
// model implementation runs on the CPU (OpenBLAS) and on a CUDA GPU.
//
// All matrices are row-major float32 with an explicit row stride where a
// caller may pass a column block of a wider matrix. Pointers returned by
// AllocateBytes() live in the device's memory; the host reaches them only
// through CopyToDevice / CopyToHost. Index arrays (slots, offsets) passed to
// operations live in device memory too. Operations are issued in order;
// Synchronize() waits for them. Results are deterministic: the same inputs
// give the same bits on the same device (no atomics in reductions; scatters
// add in index order).
//
// Backward operations named "...Backward" ACCUMULATE into their input
// gradient (dx += ...), so a tensor read by several layers gets the sum.

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/math/sparse_optimizer.h"
#include "worker/device/pooling.h"

namespace herald::worker {

class Device {
 public:
  virtual ~Device() = default;

  // e.g. "cpu", "cuda:0".
  virtual std::string name() const = 0;

  // Zero-initialised, 64-byte aligned; nullptr for 0 bytes.
  virtual void* AllocateBytes(size_t bytes) = 0;
  virtual void FreeBytes(void* p) = 0;
  virtual void CopyToDevice(const void* host, void* device, size_t bytes) = 0;
  virtual void CopyToHost(const void* device, void* host, size_t bytes) = 0;
  virtual void CopyOnDevice(const void* from, void* to, size_t bytes) = 0;
  // Host memory the device copies from at full speed (page-locked on a
  // GPU), 64-byte aligned, for CopyFromHostBuffer; plain memory by default.
  virtual void* AllocateHostBytes(size_t bytes) {
    return bytes == 0 ? nullptr : ::operator new (bytes, std::align_val_t{64});
  }
  virtual void FreeHostBytes(void* p) {
    if (p != nullptr) ::operator delete (p, std::align_val_t{64});
  }
  // CopyToDevice from memory of AllocateHostBytes, without staging: it may
  // return before the bytes are read, so the caller leaves them unchanged
  // until its next Synchronize().
  virtual void CopyFromHostBuffer(const void* host, void* device, size_t bytes) {
    CopyToDevice(host, device, bytes);
  }
  // Device memory into memory of AllocateHostBytes without waiting: the
  // bytes are there once an event recorded after this call is done
  // (RecordEvent), and the device bytes must stay unchanged until then. A
  // GPU copies on a stream of its own, so the copy overlaps the work queued
  // after it. By default a plain CopyToHost.
  virtual void CopyToHostBuffer(const void* device, void* host, size_t bytes) {
    CopyToHost(device, host, bytes);
  }
  virtual void Fill(float* x, size_t n, float value) = 0;
  virtual void Synchronize() = 0;

  // ------------------------------------------------------------ what blocks
  // Calls that wait for the device's earlier work before they return:
  // Synchronize, CopyToHost, WaitEvent, FreeBytes and FreeHostBytes (queued
  // work may still use the memory); AllocateBytes may (cudaMalloc can).
  // Every other call may return before its work is done. A CPU
  // device runs every operation on the calling thread, so nothing is ever
  // left to wait for.
  //
  // Events mark points in the device's queue. RecordEvent places `event`
  // after every operation issued so far, copies out included; WaitEvent
  // returns once they have all finished; EventDone asks without waiting;
  // EventElapsedMs is the device time from `start` to `end`, both recorded
  // and finished. Handles come from CreateEvent and go back through
  // DestroyEvent (DeviceEvent, device_event.h, does both). The defaults fit
  // a device whose operations finish before they return: an event is the
  // host time it was recorded at.
  virtual void* CreateEvent();
  virtual void DestroyEvent(void* event);
  virtual void RecordEvent(void* event);
  virtual void WaitEvent(void*) {}
  virtual bool EventDone(void*) { return true; }
  virtual double EventElapsedMs(void* start, void* end);
  // The first error the device met (a GPU fault, a failed allocation), OK
  // if none. After an error a device skips every operation, so results are
  // meaningless until the caller sees this: check it after Synchronize().
  virtual absl::Status status() const { return absl::OkStatus(); }

  // ------------------------------------------------------------ dense algebra

  // C[m×n] = alpha · op(A) · op(B) + beta · C, op(X) = X or Xᵀ. A is m×k after
  // op, B is k×n after op; lda/ldb/ldc are row strides as stored.
  virtual void Gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
                    const float* a, int lda, const float* b, int ldb, float beta, float* c,
                    int ldc) = 0;
  // y += alpha · x
  virtual void Axpy(size_t n, float alpha, const float* x, float* y) = 0;
  // y[r, c] += bias[c] for every row r of y[rows×cols].
  virtual void AddRowVector(const float* bias, int rows, int cols, float* y) = 0;
  // out[c] = Σ_r x[r, c], in a fixed order every device follows: rows in
  // blocks of kSumRowsBlock, each block summed in ascending row order, then
  // the blocks' sums in ascending block order (a batch of at most
  // kSumRowsBlock rows: plain ascending order). A GPU sums the blocks in
  // parallel.
  static constexpr int kSumRowsBlock = 256;
  virtual void SumRows(const float* x, int rows, int cols, float* out) = 0;
  // to[r, 0..cols) = from[r, 0..cols) with row strides (concatenation, split).
  virtual void Copy2D(const float* from, int from_stride, int rows, int cols, float* to,
                      int to_stride) = 0;
  // to[r, c] += from[r, c] with row strides.
  virtual void Add2D(const float* from, int from_stride, int rows, int cols, float* to,
                     int to_stride) = 0;

  // ------------------------------------------------------------ elementwise

  // y = max(x, 0)
  virtual void Relu(const float* x, size_t n, float* y) = 0;
  // dx += dy where y > 0 (y is the forward output).
  virtual void ReluBackward(const float* y, const float* dy, size_t n, float* dx) = 0;
  // y = 1 / (1 + exp(-x))
  virtual void Sigmoid(const float* x, size_t n, float* y) = 0;
  // losses[i] = BCE(sigmoid(logits[i]), labels[i]) computed stably from the
  // logit; dlogits[i] = (sigmoid(logits[i]) - labels[i]) · grad_scale.
  virtual void SigmoidCrossEntropy(const float* logits, const float* labels, int n,
                                   float grad_scale, float* losses, float* dlogits) = 0;
  // A regression label: losses[i] = (outputs[i] − labels[i])²;
  // doutputs[i] = (2 · (outputs[i] − labels[i])) · grad_scale.
  virtual void SquaredError(const float* outputs, const float* labels, int n, float grad_scale,
                            float* losses, float* doutputs) = 0;
  // out[r, c] (+)= a[r, c] · b[r, c] with row strides; `accumulate` adds.
  virtual void Multiply2D(const float* a, int a_stride, const float* b, int b_stride, int rows,
                          int cols, float* out, int out_stride, bool accumulate) = 0;
  // y[r, c] += s[r] · x[r, c] with row strides.
  virtual void AddScaledRows(const float* s, const float* x, int x_stride, int rows, int cols,
                             float* y, int y_stride) = 0;
  // A dropout mask, rows × width: mask[r·width + c] is 0 (unit c of row r
  // dropped, with probability p) or 1 / (1 − p), drawn by (key, iteration,
  // the row's sample: samples[r], or r when samples is null; c) as
  // dropout_rules.h defines. `samples` is in device memory. REQUIRES:
  // 0 < p < 1.
  virtual void DropoutMask(uint64_t key, uint64_t iteration, const uint32_t* samples, int rows,
                           int width, float p, float* mask) = 0;
  // out[r] = Σ_c a[r, c] · b[r, c] (columns in ascending order).
  virtual void RowDots(const float* a, int a_stride, const float* b, int b_stride, int rows,
                       int cols, float* out) = 0;

  // ------------------------------------------------------------ interactions
  // x is rows × (fields · dim) with row stride x_stride; field f of row r is
  // x[r·x_stride + f·dim, +dim).

  // Factorisation-machine second-order term:
  // out[r] = ½ Σ_k ((Σ_f x_fk)² − Σ_f x_fk²).
  virtual void FmForward(const float* x, int x_stride, int rows, int fields, int dim,
                         float* out) = 0;
  // dx_fk += dout[r] · (Σ_f' x_f'k − x_fk).
  virtual void FmBackward(const float* x, int x_stride, const float* dout, int rows, int fields,
                          int dim, float* dx, int dx_stride) = 0;
  // Pairwise dot products of the fields, lower triangle, pairs ordered
  // (1,0), (2,0), (2,1), (3,0), …: out is rows × fields·(fields−1)/2.
  virtual void DotInteractionForward(const float* x, int x_stride, int rows, int fields, int dim,
                                     float* out, int out_stride) = 0;
  virtual void DotInteractionBackward(const float* x, int x_stride, const float* dout,
                                      int dout_stride, int rows, int fields, int dim, float* dx,
                                      int dx_stride) = 0;

  // ------------------------------------------------------------ embeddings
  // Embedding rows live in a slot array: slot s is rows[s·row_stride, +dim)
  // (values; the optimizer state follows up to row_stride).

  // Embedding bag: out[i, 0..dim) = pool of the rows of slots[offsets[i] ..
  // offsets[i+1]): their sum, times PoolingScale (an empty bag gives zeros).
  // With `weights` (one per slot entry; null: each weighs 1) the sum is of
  // weights[j] · row, summed in entry order; the scale counts entries.
  virtual void EmbeddingBagForward(const float* rows, int row_stride, const uint32_t* offsets,
                                   const uint32_t* slots, const float* weights, int n, int dim,
                                   Pooling pooling, float* out, int out_stride) = 0;
  // grads[slot, 0..dim) += dout[i] (× PoolingScale unless kSum) (×
  // weights[j] with weights), bags in order of i and slots in order within
  // a bag. grads has row stride grad_stride.
  virtual void EmbeddingBagBackward(const float* dout, int dout_stride, const uint32_t* offsets,
                                    const uint32_t* slots, const float* weights, int n, int dim,
                                    Pooling pooling, float* grads, int grad_stride) = 0;
  // out[i, 0..width) = rows[slots[i]·row_stride, +width).
  virtual void GatherRows(const float* rows, int row_stride, const uint32_t* slots, int n,
                          int width, float* out) = 0;
  // rows[slots[i]·row_stride, +width) = in[i, 0..width).
  virtual void ScatterRows(const float* in, const uint32_t* slots, int n, int width, int row_stride,
                           float* rows) = 0;
  // rows[slots[i]·row_stride, +width) = 0.
  virtual void ZeroRows(const uint32_t* slots, int n, int width, int row_stride, float* rows) = 0;

  // ------------------------------------------------------------ every table at once
  // One table's bags in a batch of n bags per table, for the operations
  // below that take every table of a model in one call (a device may fuse
  // them into one launch per kind of operation; the results are those of
  // the per-table operations above, table by table, bit for bit).
  struct BagTable {
    const float* rows = nullptr;  // the table's slot array
    int row_stride = 0;
    const uint32_t* offsets = nullptr;  // n + 1
    const uint32_t* slots = nullptr;    // `entries`
    const float* weights = nullptr;     // `entries`; null: each weighs 1
    // offsets[n], as the caller knows it: a device need not read it back.
    uint32_t entries = 0;
    // Slots in the table (every slot < capacity); 0: unknown.
    uint32_t capacity = 0;
    int dim = 0;
    Pooling pooling = Pooling::kSum;
    float* grads = nullptr;  // `dim` floats per slot; backward adds into it
    int column = 0;          // the table's first column in out / dout
  };
  // For each table: EmbeddingBagForward(rows, …, out + column, out_stride).
  virtual void EmbeddingBagsForward(const std::vector<BagTable>& tables, int n, float* out,
                                    int out_stride) {
    for (const BagTable& t : tables) {
      EmbeddingBagForward(t.rows, t.row_stride, t.offsets, t.slots, t.weights, n, t.dim, t.pooling,
                          out + t.column, out_stride);
    }
  }
  // For each table: EmbeddingBagBackward(dout + column, …, grads, dim).
  virtual void EmbeddingBagsBackward(const std::vector<BagTable>& tables, int n, const float* dout,
                                     int dout_stride) {
    for (const BagTable& t : tables) {
      EmbeddingBagBackward(dout + t.column, dout_stride, t.offsets, t.slots, t.weights, n, t.dim,
                           t.pooling, t.grads, t.dim);
    }
  }

  // One table's part of a batched row move (the three below): `n` rows
  // listed in `slots`, `row_stride` floats apart in `rows`, their first
  // `width` floats; `packed` holds them back to back (n × width floats).
  // The rows one call writes are distinct, across its tables too.
  struct RowsOfTable {
    float* rows = nullptr;
    int row_stride = 0;
    const uint32_t* slots = nullptr;
    int n = 0;
    int width = 0;
    float* packed = nullptr;  // GatherRowsOfTables' output, ScatterRowsOfTables' input
  };
  // For each table: GatherRows(rows, row_stride, slots, n, width, packed).
  virtual void GatherRowsOfTables(const std::vector<RowsOfTable>& tables) {
    for (const RowsOfTable& t : tables) {
      GatherRows(t.rows, t.row_stride, t.slots, t.n, t.width, t.packed);
    }
  }
  // For each table: ScatterRows(packed, slots, n, width, row_stride, rows).
  virtual void ScatterRowsOfTables(const std::vector<RowsOfTable>& tables) {
    for (const RowsOfTable& t : tables) {
      ScatterRows(t.packed, t.slots, t.n, t.width, t.row_stride, t.rows);
    }
  }
  // For each table: ZeroRows(slots, n, width, row_stride, rows).
  virtual void ZeroRowsOfTables(const std::vector<RowsOfTable>& tables) {
    for (const RowsOfTable& t : tables) ZeroRows(t.slots, t.n, t.width, t.row_stride, t.rows);
  }

  // ------------------------------------------------------------ optimizers

  // One table's rows of a batched row update (ApplyRowUpdatesAndZero).
  struct RowUpdateTable {
    math::SparseOptimizerConfig optimizer;
    int dim = 0;
    const uint32_t* slots = nullptr;  // distinct
    int n = 0;
    float* grads = nullptr;  // `dim` floats per slot
    float* rows = nullptr;
    int row_stride = 0;
  };
  // For each table: ApplyRowUpdates(optimizer, dim, slots, n, grads, dim,
  // rows, row_stride), then ZeroRows(slots, n, dim, dim, grads): the rows'
  // gradients are consumed. A device may do every table in one launch.
  virtual void ApplyRowUpdatesAndZero(const std::vector<RowUpdateTable>& tables) {
    for (const RowUpdateTable& t : tables) {
      ApplyRowUpdates(t.optimizer, t.dim, t.slots, t.n, t.grads, t.dim, t.rows, t.row_stride);
      ZeroRows(t.slots, t.n, t.dim, t.dim, t.grads);
    }
  }

  // One step of `config` on a flat parameter vector (values n floats, state
  // StateFloats(kind, n) floats): the same math as common/math.
  virtual void ApplyOptimizer(const math::SparseOptimizerConfig& config, size_t n,
                              const float* grad, float* values, float* state) = 0;
  // One step on each listed row: row = rows[slots[i]·row_stride, +RowFloats),
  // gradient = grads[slots[i]·grad_stride, +dim). Slots are distinct.
  virtual void ApplyRowUpdates(const math::SparseOptimizerConfig& config, int dim,
                               const uint32_t* slots, int n, const float* grads, int grad_stride,
                               float* rows, int row_stride) = 0;
};

}  // namespace herald::worker
