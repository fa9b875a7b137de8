#pragma once
// Device on one CUDA GPU: memory from cudaMalloc, GEMM from cuBLAS (pedantic
// FP32 math: no TF32), every other operation a kernel of cuda_kernels.cu,
// all issued in order on one stream owned by the device; copies into host
// buffers (CopyToHostBuffer) go on a second stream, after the work issued
// before them, so they overlap the work issued after them. Results are
// deterministic (no atomics; the embedding-bag backward sorts by slot and
// adds each slot's entries in the CPU's order) and, except for cuBLAS's
// summation order and CUDA's exp/log1p, bitwise equal to CpuDevice.
//
// Host transfers go through two pinned staging buffers of
// `pinned_staging_bytes` each (bounded memory): CopyToDevice copies the
// caller's bytes into a pinned buffer and returns once the transfer is
// queued; CopyToHost returns when the bytes are in the caller's memory.
// Small copies to the device (kernels' argument tables, at most
// kSmallCopyBytes) take the next of kSmallCopySlots pinned slots instead,
// so that queueing one waits only for the transfer kSmallCopySlots small
// copies earlier, not for the kernels queued since the last large one.
//
// Errors: the Device interface returns nothing, so the first CUDA/cuBLAS
// error (including a failed allocation) is kept; from then on every
// operation is skipped and status() returns it, naming the call. Callers
// check status() after Synchronize() (the step executor does, per phase).
//
// Not thread-safe: one thread at a time drives a device (one worker
// replica); every operation makes the device current on the calling thread
// first, so that thread may change between steps.

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "worker/device/device.h"

struct CUstream_st;
struct CUevent_st;
struct cublasContext;

namespace herald::worker {

struct CudaDeviceOptions {
  int ordinal = 0;
  // Size of each of the two pinned host staging buffers.
  size_t pinned_staging_bytes = size_t{16} << 20;
};

// Number of CUDA devices visible; 0 with the reason in *why (no driver, no
// device, CUDA_VISIBLE_DEVICES empty, ...).
int CudaDeviceCount(std::string* why);

class CudaDevice final : public Device {
 public:
  // Errors: FailedPrecondition when the ordinal does not exist (naming how
  // many devices there are), or the CUDA/cuBLAS error of the setup.
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Create(const CudaDeviceOptions& options);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  // The first error since creation (OK if none).
  absl::Status status() const override { return status_; }
  // The stream every operation is issued on (for NCCL).
  CUstream_st* stream() const { return stream_; }
  int ordinal() const { return options_.ordinal; }
  // The GPU's UUID ("GPU-8-4-4-4-12 hex digits", as nvidia-smi prints it)
  // and product name.
  const std::string& uuid() const { return uuid_; }
  const std::string& model() const { return model_; }
  // Total memory of the GPU and the part free now, in bytes.
  size_t total_memory() const { return total_memory_; }
  size_t FreeMemory();

  std::string name() const override;
  void* AllocateBytes(size_t bytes) override;
  void FreeBytes(void* p) override;
  void CopyToDevice(const void* host, void* device, size_t bytes) override;
  void CopyToHost(const void* device, void* host, size_t bytes) override;
  void CopyOnDevice(const void* from, void* to, size_t bytes) override;
  // Page-locked (cudaMallocHost); the copy from it is one cudaMemcpyAsync.
  void* AllocateHostBytes(size_t bytes) override;
  void FreeHostBytes(void* p) override;
  void CopyFromHostBuffer(const void* host, void* device, size_t bytes) override;
  // On the copy stream, once the work issued before it is done.
  void CopyToHostBuffer(const void* device, void* host, size_t bytes) override;
  void Fill(float* x, size_t n, float value) override;
  // Both streams.
  void Synchronize() override;

  // A timing event on the compute stream, and one the copy stream records
  // after waiting for it (both streams' work so far).
  void* CreateEvent() override;
  void DestroyEvent(void* event) override;
  void RecordEvent(void* event) override;
  void WaitEvent(void* event) override;
  bool EventDone(void* event) override;
  double EventElapsedMs(void* start, void* end) override;

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
  // Whether the bag kernels may move four floats at once: `matrix` (out or
  // dout) and its stride, and every table's dim, column, row_stride and
  // rows (grads: its grads, row_stride then holding the grad stride) are
  // multiples of 4 floats.
  static bool FourFloatsAtOnce(const std::vector<BagTable>& tables, const float* matrix,
                               int matrix_stride, bool grads);
  // Every table in one launch (forward), and with one sort (backward); no
  // read back. Tables of unknown capacity, or more than 2³² slots in all,
  // go table by table.
  void EmbeddingBagsForward(const std::vector<BagTable>& tables, int n, float* out,
                            int out_stride) override;
  void EmbeddingBagsBackward(const std::vector<BagTable>& tables, int n, const float* dout,
                             int dout_stride) override;
  void GatherRows(const float* rows, int row_stride, const uint32_t* slots, int n, int width,
                  float* out) override;
  void ScatterRows(const float* in, const uint32_t* slots, int n, int width, int row_stride,
                   float* rows) override;
  void ZeroRows(const uint32_t* slots, int n, int width, int row_stride, float* rows) override;
  // Every table in one launch (one thread per float moved).
  void GatherRowsOfTables(const std::vector<RowsOfTable>& tables) override;
  void ScatterRowsOfTables(const std::vector<RowsOfTable>& tables) override;
  void ZeroRowsOfTables(const std::vector<RowsOfTable>& tables) override;

  void ApplyOptimizer(const math::SparseOptimizerConfig& config, size_t n, const float* grad,
                      float* values, float* state) override;
  void ApplyRowUpdates(const math::SparseOptimizerConfig& config, int dim, const uint32_t* slots,
                       int n, const float* grads, int grad_stride, float* rows,
                       int row_stride) override;
  // Every table in one launch (one block per row).
  void ApplyRowUpdatesAndZero(const std::vector<RowUpdateTable>& tables) override;

 private:
  explicit CudaDevice(const CudaDeviceOptions& options);
  absl::Status Init();
  // Records the first failure of `call` (a cudaError_t / cublasStatus_t as
  // int, 0 = success); returns whether it succeeded.
  bool CheckCuda(int error, const char* call);
  bool CheckCublas(int status, const char* call);
  // No error so far, and the device is current on this thread.
  bool Ready();
  // Grows a device scratch buffer (contents not kept).
  void* Scratch(int index, size_t bytes);
  // The tables' kernel arguments, copied to device scratch; null on error.
  // grad_stride 0: each table's dim.
  const void* UploadBagTables(const std::vector<BagTable>& tables, int grad_stride, int* max_dim);
  void EmbeddingBagsBackward(const std::vector<BagTable>& tables, int n, const float* dout,
                             int dout_stride, int grad_stride);
  // The three batched row moves: `move` is a cuda::RowMove.
  void MoveRowsOfTables(int move, const std::vector<RowsOfTable>& tables);

  CudaDeviceOptions options_;
  absl::Status status_;
  size_t total_memory_ = 0;
  std::string uuid_, model_;
  CUstream_st* stream_ = nullptr;
  // Copies into host buffers; compute_mark_ orders each after the compute
  // stream's work issued before it.
  CUstream_st* copy_stream_ = nullptr;
  CUevent_st* compute_mark_ = nullptr;
  cublasContext* cublas_ = nullptr;
  // Pinned staging: two buffers, each with the event of its last transfer.
  void* pinned_[2] = {nullptr, nullptr};
  CUevent_st* pinned_done_[2] = {nullptr, nullptr};
  int next_pinned_ = 0;
  // The ring of small copies: kSmallCopySlots slots of small_copy_bytes_
  // in one pinned block, each with the event of its last transfer.
  static constexpr int kSmallCopySlots = 64;
  static constexpr size_t kSmallCopyBytes = 16 << 10;
  size_t small_copy_bytes_ = 0;
  char* small_pinned_ = nullptr;
  CUevent_st* small_done_[kSmallCopySlots] = {};
  int next_small_ = 0;
  // Device scratch of the embedding-bag backward (and overlapping copies).
  void* scratch_[11] = {};  // by the Scratch enum of cuda_device.cc
  size_t scratch_bytes_[11] = {};
};

}  // namespace herald::worker
