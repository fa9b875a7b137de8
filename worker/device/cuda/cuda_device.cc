#include "worker/device/cuda/cuda_device.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "worker/device/cuda/cuda_kernels.h"

namespace herald::worker {
namespace {

bool Overlaps(const void* a, const void* b, size_t bytes) {
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  return x < y + bytes && y < x + bytes;
}

// Scratch buffer indices.
enum Scratch {
  kBagOf,
  kIdentity,
  kSortedSlots,
  kSortedPositions,
  kSortTemp,
  kMoveTemp,
  kBagKeys,
  kBagTables,
  kBlockSums,
  kRowUpdateTables,
  kRowMoveTables,
  kScratchCount  // their number
};

}  // namespace

int CudaDeviceCount(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *why = absl::StrCat("cudaGetDeviceCount: ", cudaGetErrorString(e));
    cudaGetLastError();  // not sticky: clear it
    return 0;
  }
  if (n == 0) *why = "no CUDA device visible";
  return n;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(const CudaDeviceOptions& options) {
  std::string why;
  const int count = CudaDeviceCount(&why);
  if (options.ordinal < 0 || options.ordinal >= count) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuda:", options.ordinal, " does not exist: ", count,
                     " CUDA device(s) visible", why.empty() ? "" : absl::StrCat(" (", why, ")")));
  }
  if (options.pinned_staging_bytes < 4096) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pinned staging of ", options.pinned_staging_bytes, " bytes: at least 4096 needed"));
  }
  std::unique_ptr<CudaDevice> device(new CudaDevice(options));
  if (absl::Status s = device->Init(); !s.ok()) return s;
  return device;
}

CudaDevice::CudaDevice(const CudaDeviceOptions& options) : options_(options) {}

absl::Status CudaDevice::Init() {
  CheckCuda(cudaSetDevice(options_.ordinal), "cudaSetDevice");
  size_t free_bytes = 0;
  CheckCuda(cudaMemGetInfo(&free_bytes, &total_memory_), "cudaMemGetInfo");
  cudaDeviceProp prop;
  if (CheckCuda(cudaGetDeviceProperties(&prop, options_.ordinal), "cudaGetDeviceProperties")) {
    model_ = prop.name;
    uuid_ = "GPU-";
    for (int i = 0; i < 16; ++i) {
      absl::StrAppend(&uuid_,
                      absl::Hex(static_cast<unsigned char>(prop.uuid.bytes[i]), absl::kZeroPad2));
      if (i == 3 || i == 5 || i == 7 || i == 9) uuid_ += "-";
    }
  }
  CheckCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  CheckCuda(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  CheckCuda(cudaEventCreateWithFlags(&compute_mark_, cudaEventDisableTiming), "cudaEventCreate");
  CheckCublas(cublasCreate(&cublas_), "cublasCreate");
  if (Ready()) {
    CheckCublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
    // Plain FP32: no TF32 or other reduced-precision shortcuts.
    CheckCublas(cublasSetMathMode(cublas_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  for (int i = 0; i < 2 && status_.ok(); ++i) {
    CheckCuda(cudaMallocHost(&pinned_[i], options_.pinned_staging_bytes), "cudaMallocHost");
    CheckCuda(cudaEventCreateWithFlags(&pinned_done_[i], cudaEventDisableTiming),
              "cudaEventCreate");
  }
  small_copy_bytes_ = std::min(kSmallCopyBytes, options_.pinned_staging_bytes);
  void* small = nullptr;
  if (status_.ok()) {
    CheckCuda(cudaMallocHost(&small, small_copy_bytes_ * kSmallCopySlots), "cudaMallocHost");
  }
  small_pinned_ = static_cast<char*>(small);
  for (int i = 0; i < kSmallCopySlots && status_.ok(); ++i) {
    CheckCuda(cudaEventCreateWithFlags(&small_done_[i], cudaEventDisableTiming), "cudaEventCreate");
  }
  return status_;
}

CudaDevice::~CudaDevice() {
  cudaSetDevice(options_.ordinal);
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  if (copy_stream_ != nullptr) cudaStreamSynchronize(copy_stream_);
  for (void* p : scratch_) cudaFree(p);
  for (int i = 0; i < 2; ++i) {
    if (pinned_done_[i] != nullptr) cudaEventDestroy(pinned_done_[i]);
    if (pinned_[i] != nullptr) cudaFreeHost(pinned_[i]);
  }
  for (CUevent_st* done : small_done_) {
    if (done != nullptr) cudaEventDestroy(done);
  }
  if (small_pinned_ != nullptr) cudaFreeHost(small_pinned_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (compute_mark_ != nullptr) cudaEventDestroy(compute_mark_);
  if (copy_stream_ != nullptr) cudaStreamDestroy(copy_stream_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

bool CudaDevice::CheckCuda(int error, const char* call) {
  if (error == cudaSuccess) return true;
  if (Ready()) {
    status_ = absl::InternalError(absl::StrCat(
        name(), ": ", call, " failed: ", cudaGetErrorName(static_cast<cudaError_t>(error)), " (",
        cudaGetErrorString(static_cast<cudaError_t>(error)), ")"));
  }
  return false;
}

bool CudaDevice::CheckCublas(int status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  if (Ready()) {
    status_ = absl::InternalError(
        absl::StrCat(name(), ": ", call,
                     " failed: ", cublasGetStatusString(static_cast<cublasStatus_t>(status))));
  }
  return false;
}

bool CudaDevice::Ready() {
  return status_.ok() && CheckCuda(cudaSetDevice(options_.ordinal), "cudaSetDevice");
}

std::string CudaDevice::name() const { return absl::StrCat("cuda:", options_.ordinal); }

size_t CudaDevice::FreeMemory() {
  size_t free_bytes = 0, total = 0;
  CheckCuda(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  return free_bytes;
}

void* CudaDevice::AllocateBytes(size_t bytes) {
  if (bytes == 0 || !Ready()) return nullptr;
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();  // an out-of-memory error is not sticky
    if (Ready()) {
      status_ = absl::ResourceExhaustedError(
          absl::StrCat(name(), ": cudaMalloc of ", bytes, " bytes failed: ", cudaGetErrorString(e),
                       " (", FreeMemory(), " of ", total_memory_, " bytes free)"));
    }
    return nullptr;
  }
  CheckCuda(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync");
  return p;
}

void CudaDevice::FreeBytes(void* p) {
  if (p == nullptr) return;
  cudaSetDevice(options_.ordinal);  // also after an error: memory is returned
  // Kernels or copies queued on the streams may still read it.
  CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  CheckCuda(cudaStreamSynchronize(copy_stream_), "cudaStreamSynchronize (copies)");
  CheckCuda(cudaFree(p), "cudaFree");
}

void CudaDevice::CopyToDevice(const void* host, void* device, size_t bytes) {
  const char* from = static_cast<const char*>(host);
  char* to = static_cast<char*>(device);
  if (!Ready()) return;
  if (bytes > 0 && bytes <= small_copy_bytes_) {
    const int slot = next_small_;
    next_small_ = (next_small_ + 1) % kSmallCopySlots;
    char* staged = small_pinned_ + static_cast<size_t>(slot) * small_copy_bytes_;
    if (!CheckCuda(cudaEventSynchronize(small_done_[slot]), "cudaEventSynchronize")) return;
    std::memcpy(staged, from, bytes);
    CheckCuda(cudaMemcpyAsync(to, staged, bytes, cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (host to device)");
    CheckCuda(cudaEventRecord(small_done_[slot], stream_), "cudaEventRecord");
    return;
  }
  while (bytes > 0 && status_.ok()) {
    const size_t chunk = std::min(bytes, options_.pinned_staging_bytes);
    const int b = next_pinned_;
    next_pinned_ ^= 1;
    // The buffer's previous transfer must have left it before it is refilled.
    if (!CheckCuda(cudaEventSynchronize(pinned_done_[b]), "cudaEventSynchronize")) return;
    std::memcpy(pinned_[b], from, chunk);
    CheckCuda(cudaMemcpyAsync(to, pinned_[b], chunk, cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync (host to device)");
    CheckCuda(cudaEventRecord(pinned_done_[b], stream_), "cudaEventRecord");
    from += chunk;
    to += chunk;
    bytes -= chunk;
  }
}

void CudaDevice::CopyToHost(const void* device, void* host, size_t bytes) {
  const char* from = static_cast<const char*>(device);
  char* to = static_cast<char*>(host);
  // Two chunks in flight: chunk i+1 is copied to pinned memory while chunk
  // i is copied out of it by the host.
  if (!Ready()) return;
  size_t pending = 0;  // bytes of the previous chunk, not yet copied out
  int pending_buffer = 0;
  char* pending_to = nullptr;
  while ((bytes > 0 || pending > 0) && status_.ok()) {
    int b = -1;
    size_t chunk = 0;
    if (bytes > 0) {
      chunk = std::min(bytes, options_.pinned_staging_bytes);
      b = next_pinned_;
      next_pinned_ ^= 1;
      if (!CheckCuda(cudaEventSynchronize(pinned_done_[b]), "cudaEventSynchronize")) return;
      CheckCuda(cudaMemcpyAsync(pinned_[b], from, chunk, cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync (device to host)");
      CheckCuda(cudaEventRecord(pinned_done_[b], stream_), "cudaEventRecord");
    }
    if (pending > 0) {
      if (!CheckCuda(cudaEventSynchronize(pinned_done_[pending_buffer]), "cudaEventSynchronize")) {
        return;
      }
      std::memcpy(pending_to, pinned_[pending_buffer], pending);
    }
    pending = chunk;
    pending_buffer = b;
    pending_to = to;
    from += chunk;
    to += chunk;
    bytes -= chunk;
  }
}

void* CudaDevice::AllocateHostBytes(size_t bytes) {
  if (bytes == 0 || !Ready()) return nullptr;
  void* p = nullptr;
  if (!CheckCuda(cudaMallocHost(&p, bytes), "cudaMallocHost")) return nullptr;
  return p;
}

void CudaDevice::FreeHostBytes(void* p) {
  if (p == nullptr) return;
  cudaSetDevice(options_.ordinal);
  // A copy queued on either stream may still use it.
  CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  CheckCuda(cudaStreamSynchronize(copy_stream_), "cudaStreamSynchronize (copies)");
  CheckCuda(cudaFreeHost(p), "cudaFreeHost");
}

void CudaDevice::CopyFromHostBuffer(const void* host, void* device, size_t bytes) {
  if (bytes == 0 || !Ready()) return;
  CheckCuda(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_),
            "cudaMemcpyAsync (host buffer to device)");
}

void CudaDevice::CopyOnDevice(const void* from, void* to, size_t bytes) {
  if (bytes == 0 || !Ready()) return;
  if (Overlaps(from, to, bytes)) {  // memmove semantics through scratch
    void* temp = Scratch(kMoveTemp, bytes);
    if (temp == nullptr) return;
    CheckCuda(cudaMemcpyAsync(temp, from, bytes, cudaMemcpyDeviceToDevice, stream_),
              "cudaMemcpyAsync (device to device)");
    from = temp;
  }
  CheckCuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream_),
            "cudaMemcpyAsync (device to device)");
}

void CudaDevice::CopyToHostBuffer(const void* device, void* host, size_t bytes) {
  if (bytes == 0 || !Ready()) return;
  CheckCuda(cudaEventRecord(compute_mark_, stream_), "cudaEventRecord");
  CheckCuda(cudaStreamWaitEvent(copy_stream_, compute_mark_, 0), "cudaStreamWaitEvent");
  CheckCuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, copy_stream_),
            "cudaMemcpyAsync (device to host buffer)");
}

void CudaDevice::Synchronize() {
  if (!Ready()) return;
  CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  CheckCuda(cudaStreamSynchronize(copy_stream_), "cudaStreamSynchronize (copies)");
}

namespace {

struct CudaEvent {
  cudaEvent_t compute = nullptr;  // timing, on the compute stream
  cudaEvent_t all = nullptr;      // on the copy stream, after `compute`
};

}  // namespace

void* CudaDevice::CreateEvent() {
  auto* event = new CudaEvent;
  if (Ready()) {
    CheckCuda(cudaEventCreate(&event->compute), "cudaEventCreate");
    CheckCuda(cudaEventCreateWithFlags(&event->all, cudaEventDisableTiming), "cudaEventCreate");
  }
  return event;
}

void CudaDevice::DestroyEvent(void* event) {
  auto* e = static_cast<CudaEvent*>(event);
  cudaSetDevice(options_.ordinal);
  if (e->compute != nullptr) cudaEventDestroy(e->compute);
  if (e->all != nullptr) cudaEventDestroy(e->all);
  delete e;
}

void CudaDevice::RecordEvent(void* event) {
  auto* e = static_cast<CudaEvent*>(event);
  if (!Ready() || e->compute == nullptr || e->all == nullptr) return;
  CheckCuda(cudaEventRecord(e->compute, stream_), "cudaEventRecord");
  CheckCuda(cudaStreamWaitEvent(copy_stream_, e->compute, 0), "cudaStreamWaitEvent");
  CheckCuda(cudaEventRecord(e->all, copy_stream_), "cudaEventRecord (copies)");
}

void CudaDevice::WaitEvent(void* event) {
  auto* e = static_cast<CudaEvent*>(event);
  if (Ready() && e->all != nullptr) CheckCuda(cudaEventSynchronize(e->all), "cudaEventSynchronize");
}

bool CudaDevice::EventDone(void* event) {
  auto* e = static_cast<CudaEvent*>(event);
  if (!Ready() || e->all == nullptr) return true;  // after an error nothing runs
  const cudaError_t done = cudaEventQuery(e->all);
  if (done == cudaErrorNotReady) return false;
  CheckCuda(done, "cudaEventQuery");
  return true;
}

double CudaDevice::EventElapsedMs(void* start, void* end) {
  auto* a = static_cast<CudaEvent*>(start);
  auto* b = static_cast<CudaEvent*>(end);
  float ms = 0;
  if (!Ready() || a->compute == nullptr || b->compute == nullptr) return 0;
  CheckCuda(cudaEventElapsedTime(&ms, a->compute, b->compute), "cudaEventElapsedTime");
  return ms;
}

void* CudaDevice::Scratch(int index, size_t bytes) {
  static_assert(kScratchCount <= sizeof(scratch_) / sizeof(scratch_[0]), "a buffer per index");
  if (scratch_bytes_[index] < bytes) {
    const size_t grown = std::max(bytes, scratch_bytes_[index] * 2);
    FreeBytes(scratch_[index]);
    scratch_[index] = nullptr;
    scratch_bytes_[index] = 0;
    scratch_[index] = AllocateBytes(grown);
    if (scratch_[index] == nullptr) return nullptr;
    scratch_bytes_[index] = grown;
  }
  return scratch_[index];
}

void CudaDevice::Fill(float* x, size_t n, float value) {
  if (Ready()) CheckCuda(cuda::Fill(stream_, x, n, value), "Fill kernel");
}

void CudaDevice::Gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
                      const float* a, int lda, const float* b, int ldb, float beta, float* c,
                      int ldc) {
  if (m == 0 || n == 0 || !Ready()) return;
  if (k == 0) {
    CheckCuda(cuda::ScaleMatrix(stream_, c, m, n, ldc, beta), "ScaleMatrix kernel");
    return;
  }
  // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and a
  // row-major matrix read column-major is its transpose: so cuBLAS gets B
  // first, with the same transposition flags, and the dimensions n, m.
  CheckCublas(cublasSgemm(cublas_, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                          transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, ldb, a, lda,
                          &beta, c, ldc),
              "cublasSgemm");
}

void CudaDevice::Axpy(size_t n, float alpha, const float* x, float* y) {
  if (Ready()) CheckCuda(cuda::Axpy(stream_, n, alpha, x, y), "Axpy kernel");
}

void CudaDevice::AddRowVector(const float* bias, int rows, int cols, float* y) {
  if (Ready()) {
    CheckCuda(cuda::AddRowVector(stream_, bias, rows, cols, y), "AddRowVector kernel");
  }
}

void CudaDevice::SumRows(const float* x, int rows, int cols, float* out) {
  if (cols == 0 || !Ready()) return;
  const size_t blocks = (static_cast<size_t>(rows) + kSumRowsBlock - 1) / kSumRowsBlock;
  float* block_sums = nullptr;
  if (blocks > 1) {
    block_sums = static_cast<float*>(Scratch(kBlockSums, blocks * cols * sizeof(float)));
    if (block_sums == nullptr) return;
  }
  CheckCuda(cuda::SumRows(stream_, x, rows, cols, kSumRowsBlock, block_sums, out),
            "SumRows kernels");
}

void CudaDevice::Copy2D(const float* from, int from_stride, int rows, int cols, float* to,
                        int to_stride) {
  if (rows == 0 || cols == 0 || !Ready()) return;
  CheckCuda(cudaMemcpy2DAsync(to, to_stride * sizeof(float), from, from_stride * sizeof(float),
                              cols * sizeof(float), rows, cudaMemcpyDeviceToDevice, stream_),
            "cudaMemcpy2DAsync");
}

void CudaDevice::Add2D(const float* from, int from_stride, int rows, int cols, float* to,
                       int to_stride) {
  if (Ready()) {
    CheckCuda(cuda::Add2D(stream_, from, from_stride, rows, cols, to, to_stride), "Add2D kernel");
  }
}

void CudaDevice::Relu(const float* x, size_t n, float* y) {
  if (Ready()) CheckCuda(cuda::Relu(stream_, x, n, y), "Relu kernel");
}

void CudaDevice::ReluBackward(const float* y, const float* dy, size_t n, float* dx) {
  if (Ready()) CheckCuda(cuda::ReluBackward(stream_, y, dy, n, dx), "ReluBackward kernel");
}

void CudaDevice::Sigmoid(const float* x, size_t n, float* y) {
  if (Ready()) CheckCuda(cuda::Sigmoid(stream_, x, n, y), "Sigmoid kernel");
}

void CudaDevice::SquaredError(const float* outputs, const float* labels, int n, float grad_scale,
                              float* losses, float* doutputs) {
  if (Ready()) {
    CheckCuda(cuda::SquaredError(stream_, outputs, labels, n, grad_scale, losses, doutputs),
              "SquaredError kernel");
  }
}

void CudaDevice::SigmoidCrossEntropy(const float* logits, const float* labels, int n,
                                     float grad_scale, float* losses, float* dlogits) {
  if (Ready()) {
    CheckCuda(cuda::SigmoidCrossEntropy(stream_, logits, labels, n, grad_scale, losses, dlogits),
              "SigmoidCrossEntropy kernel");
  }
}

void CudaDevice::Multiply2D(const float* a, int a_stride, const float* b, int b_stride, int rows,
                            int cols, float* out, int out_stride, bool accumulate) {
  if (Ready()) {
    CheckCuda(cuda::Multiply2D(stream_, a, a_stride, b, b_stride, rows, cols, out, out_stride,
                               accumulate),
              "Multiply2D kernel");
  }
}

void CudaDevice::AddScaledRows(const float* s, const float* x, int x_stride, int rows, int cols,
                               float* y, int y_stride) {
  if (Ready()) {
    CheckCuda(cuda::AddScaledRows(stream_, s, x, x_stride, rows, cols, y, y_stride),
              "AddScaledRows kernel");
  }
}

void CudaDevice::RowDots(const float* a, int a_stride, const float* b, int b_stride, int rows,
                         int cols, float* out) {
  if (Ready()) {
    CheckCuda(cuda::RowDots(stream_, a, a_stride, b, b_stride, rows, cols, out), "RowDots kernel");
  }
}

void CudaDevice::DropoutMask(uint64_t key, uint64_t iteration, const uint32_t* samples, int rows,
                             int width, float p, float* mask) {
  if (Ready()) {
    CheckCuda(cuda::DropoutMask(stream_, key, iteration, samples, rows, width, p, 1.0f / (1.0f - p),
                                mask),
              "DropoutMask kernel");
  }
}

void CudaDevice::FmForward(const float* x, int x_stride, int rows, int fields, int dim,
                           float* out) {
  if (Ready()) {
    CheckCuda(cuda::FmForward(stream_, x, x_stride, rows, fields, dim, out), "FmForward kernel");
  }
}

void CudaDevice::FmBackward(const float* x, int x_stride, const float* dout, int rows, int fields,
                            int dim, float* dx, int dx_stride) {
  if (Ready()) {
    CheckCuda(cuda::FmBackward(stream_, x, x_stride, dout, rows, fields, dim, dx, dx_stride),
              "FmBackward kernel");
  }
}

void CudaDevice::DotInteractionForward(const float* x, int x_stride, int rows, int fields, int dim,
                                       float* out, int out_stride) {
  if (Ready()) {
    CheckCuda(cuda::DotInteractionForward(stream_, x, x_stride, rows, fields, dim, out, out_stride),
              "DotInteractionForward kernel");
  }
}

void CudaDevice::DotInteractionBackward(const float* x, int x_stride, const float* dout,
                                        int dout_stride, int rows, int fields, int dim, float* dx,
                                        int dx_stride) {
  if (Ready()) {
    CheckCuda(cuda::DotInteractionBackward(stream_, x, x_stride, dout, dout_stride, rows, fields,
                                           dim, dx, dx_stride),
              "DotInteractionBackward kernel");
  }
}

void CudaDevice::EmbeddingBagForward(const float* rows, int row_stride, const uint32_t* offsets,
                                     const uint32_t* slots, const float* weights, int n, int dim,
                                     Pooling pooling, float* out, int out_stride) {
  BagTable table;
  table.rows = rows;
  table.row_stride = row_stride;
  table.offsets = offsets;
  table.slots = slots;
  table.weights = weights;
  table.dim = dim;
  table.pooling = pooling;
  EmbeddingBagsForward({table}, n, out, out_stride);
}

void CudaDevice::EmbeddingBagBackward(const float* dout, int dout_stride, const uint32_t* offsets,
                                      const uint32_t* slots, const float* weights, int n, int dim,
                                      Pooling pooling, float* grads, int grad_stride) {
  if (n == 0 || dim == 0 || !Ready()) return;
  BagTable table;
  table.offsets = offsets;
  table.slots = slots;
  table.weights = weights;
  // offsets[n]: the one host read of this operation (the batched one needs none).
  CopyToHost(offsets + n, &table.entries, sizeof(table.entries));
  table.dim = dim;
  table.pooling = pooling;
  table.grads = grads;
  EmbeddingBagsBackward({table}, n, dout, dout_stride, grad_stride);
}

namespace {

bool FourFloatAligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool CudaDevice::FourFloatsAtOnce(const std::vector<BagTable>& tables, const float* matrix,
                                  int matrix_stride, bool grads) {
  if (!FourFloatAligned(matrix) || matrix_stride % 4 != 0) return false;
  for (const BagTable& t : tables) {
    const float* rows = grads ? t.grads : t.rows;
    if (t.dim % 4 != 0 || t.column % 4 != 0 || t.row_stride % 4 != 0 || !FourFloatAligned(rows)) {
      return false;
    }
  }
  return true;
}

const void* CudaDevice::UploadBagTables(const std::vector<BagTable>& tables, int grad_stride,
                                        int* max_dim) {
  std::vector<cuda::BagTableArgs> args(tables.size());
  uint32_t entry_base = 0, slot_base = 0;
  *max_dim = 0;
  for (size_t i = 0; i < tables.size(); ++i) {
    const BagTable& t = tables[i];
    args[i].rows = t.rows;
    args[i].offsets = t.offsets;
    args[i].slots = t.slots;
    args[i].weights = t.weights;
    args[i].grads = t.grads;
    args[i].entry_base = entry_base;
    args[i].slot_base = slot_base;
    args[i].row_stride = t.row_stride;
    args[i].dim = t.dim;
    args[i].grad_stride = grad_stride > 0 ? grad_stride : t.dim;
    args[i].column = t.column;
    args[i].pooling = static_cast<int>(t.pooling);
    entry_base += t.entries;
    slot_base += t.capacity;
    *max_dim = std::max(*max_dim, t.dim);
  }
  const size_t bytes = args.size() * sizeof(cuda::BagTableArgs);
  void* device = Scratch(kBagTables, bytes);
  if (device == nullptr) return nullptr;
  CopyToDevice(args.data(), device, bytes);  // staged: `args` may go at once
  return status_.ok() ? device : nullptr;
}

void CudaDevice::EmbeddingBagsForward(const std::vector<BagTable>& tables, int n, float* out,
                                      int out_stride) {
  if (n == 0 || tables.empty() || !Ready()) return;
  int max_dim = 0;
  const auto* args = static_cast<const cuda::BagTableArgs*>(UploadBagTables(tables, 0, &max_dim));
  if (args == nullptr || max_dim == 0) return;
  const int width = FourFloatsAtOnce(tables, out, out_stride, /*grads=*/false) ? 4 : 1;
  CheckCuda(cuda::EmbeddingBagsForward(stream_, args, static_cast<int>(tables.size()), n, max_dim,
                                       width, out, out_stride),
            "EmbeddingBagsForward kernel");
}

void CudaDevice::EmbeddingBagsBackward(const std::vector<BagTable>& tables, int n,
                                       const float* dout, int dout_stride) {
  EmbeddingBagsBackward(tables, n, dout, dout_stride, /*grad_stride=*/0);
}

void CudaDevice::EmbeddingBagsBackward(const std::vector<BagTable>& tables, int n,
                                       const float* dout, int dout_stride, int grad_stride) {
  if (n == 0 || tables.empty() || !Ready()) return;
  uint64_t slots = 0, entries = 0;
  bool known = true;
  for (const BagTable& t : tables) {
    known &= t.capacity > 0;
    slots += t.capacity;
    entries += t.entries;
  }
  if (tables.size() == 1 && !known) {
    slots = uint64_t{1} << 32;  // one table of unknown capacity: every key bit
  } else if (!known || slots > uint64_t{1} << 32) {
    for (const BagTable& t : tables) EmbeddingBagsBackward({t}, n, dout, dout_stride, grad_stride);
    return;
  }
  if (entries > uint64_t{1} << 31) {
    status_ = absl::InvalidArgumentError(absl::StrCat(name(), ": EmbeddingBagsBackward of ",
                                                      entries, " entries (at most 2^31 per call)"));
    return;
  }
  if (entries == 0) return;
  int max_dim = 0;
  const auto* args =
      static_cast<const cuda::BagTableArgs*>(UploadBagTables(tables, grad_stride, &max_dim));
  if (args == nullptr || max_dim == 0) return;
  const auto count = static_cast<uint32_t>(entries);
  const size_t index_bytes = count * sizeof(uint32_t);
  auto* keys = static_cast<uint32_t*>(Scratch(kBagKeys, index_bytes));
  auto* bag_of = static_cast<uint32_t*>(Scratch(kBagOf, index_bytes));
  auto* positions = static_cast<uint32_t*>(Scratch(kIdentity, index_bytes));
  auto* sorted_keys = static_cast<uint32_t*>(Scratch(kSortedSlots, index_bytes));
  auto* sorted_positions = static_cast<uint32_t*>(Scratch(kSortedPositions, index_bytes));
  int bits = 1;  // the key bits the sort must look at: keys < slots
  while (bits < 32 && (uint64_t{1} << bits) < slots) ++bits;
  size_t temp_bytes = 0;
  if (!CheckCuda(cuda::SortByKey(stream_, nullptr, &temp_bytes, keys, sorted_keys, positions,
                                 sorted_positions, count, bits),
                 "SortByKey (sizing)")) {
    return;
  }
  void* temp = Scratch(kSortTemp, std::max<size_t>(temp_bytes, 1));
  if (!status_.ok()) return;
  const int tables_count = static_cast<int>(tables.size());
  CheckCuda(cuda::BagEntries(stream_, args, tables_count, n, keys, positions, bag_of),
            "BagEntries kernel");
  CheckCuda(cuda::SortByKey(stream_, temp, &temp_bytes, keys, sorted_keys, positions,
                            sorted_positions, count, bits),
            "SortByKey");
  std::vector<BagTable> strided = tables;  // the grad strides the kernel uses
  for (BagTable& t : strided) t.row_stride = grad_stride > 0 ? grad_stride : t.dim;
  const int width = FourFloatsAtOnce(strided, dout, dout_stride, /*grads=*/true) ? 4 : 1;
  CheckCuda(
      cuda::AccumulateSortedTables(stream_, args, tables_count, dout, dout_stride, sorted_keys,
                                   sorted_positions, bag_of, count, max_dim, width),
      "AccumulateSortedTables kernel");
}

void CudaDevice::GatherRows(const float* rows, int row_stride, const uint32_t* slots, int n,
                            int width, float* out) {
  if (Ready()) {
    CheckCuda(cuda::GatherRows(stream_, rows, row_stride, slots, n, width, out),
              "GatherRows kernel");
  }
}

void CudaDevice::ScatterRows(const float* in, const uint32_t* slots, int n, int width,
                             int row_stride, float* rows) {
  if (Ready()) {
    CheckCuda(cuda::ScatterRows(stream_, in, slots, n, width, row_stride, rows),
              "ScatterRows kernel");
  }
}

void CudaDevice::ZeroRows(const uint32_t* slots, int n, int width, int row_stride, float* rows) {
  if (Ready()) {
    CheckCuda(cuda::ZeroRows(stream_, slots, n, width, row_stride, rows), "ZeroRows kernel");
  }
}

void CudaDevice::GatherRowsOfTables(const std::vector<RowsOfTable>& tables) {
  MoveRowsOfTables(cuda::kGatherRows, tables);
}

void CudaDevice::ScatterRowsOfTables(const std::vector<RowsOfTable>& tables) {
  MoveRowsOfTables(cuda::kScatterRows, tables);
}

void CudaDevice::ZeroRowsOfTables(const std::vector<RowsOfTable>& tables) {
  MoveRowsOfTables(cuda::kZeroRows, tables);
}

void CudaDevice::MoveRowsOfTables(int move, const std::vector<RowsOfTable>& tables) {
  if (!Ready()) return;
  std::vector<cuda::RowMoveArgs> args;
  uint64_t total = 0;
  for (const RowsOfTable& t : tables) {
    if (t.n <= 0 || t.width <= 0) continue;
    args.push_back({t.rows, t.slots, t.packed, total, t.row_stride, t.width});
    total += static_cast<uint64_t>(t.n) * static_cast<uint64_t>(t.width);
  }
  if (args.empty()) return;
  const size_t bytes = args.size() * sizeof(cuda::RowMoveArgs);
  void* device = Scratch(kRowMoveTables, bytes);
  if (device == nullptr) return;
  CopyToDevice(args.data(), device, bytes);  // staged: `args` may go at once
  CheckCuda(cuda::MoveRowsOfTables(stream_, static_cast<cuda::RowMove>(move),
                                   static_cast<const cuda::RowMoveArgs*>(device),
                                   static_cast<int>(args.size()), total),
            "MoveRowsOfTables kernel");
}

void CudaDevice::ApplyOptimizer(const math::SparseOptimizerConfig& config, size_t n,
                                const float* grad, float* values, float* state) {
  if (Ready()) {
    CheckCuda(cuda::ApplyOptimizer(stream_, config, n, grad, values, state),
              "ApplyOptimizer kernel");
  }
}

void CudaDevice::ApplyRowUpdatesAndZero(const std::vector<RowUpdateTable>& tables) {
  if (tables.empty() || !Ready()) return;
  std::vector<cuda::RowUpdateArgs> args(tables.size());
  uint64_t rows = 0;
  int max_dim = 0;
  for (size_t i = 0; i < tables.size(); ++i) {
    const RowUpdateTable& t = tables[i];
    args[i] = {
        t.optimizer, t.dim, t.slots, t.grads, t.rows, t.row_stride, static_cast<uint32_t>(rows)};
    rows += static_cast<uint64_t>(t.n);
    max_dim = std::max(max_dim, t.dim);
  }
  if (rows >= uint64_t{1} << 31) {  // more blocks than one launch takes
    Device::ApplyRowUpdatesAndZero(tables);
    return;
  }
  if (rows == 0) return;
  const size_t bytes = args.size() * sizeof(cuda::RowUpdateArgs);
  void* device = Scratch(kRowUpdateTables, bytes);
  if (device == nullptr) return;
  CopyToDevice(args.data(), device, bytes);  // staged: `args` may go at once
  CheckCuda(cuda::ApplyRowUpdatesAndZero(stream_, static_cast<const cuda::RowUpdateArgs*>(device),
                                         static_cast<int>(args.size()), static_cast<uint32_t>(rows),
                                         max_dim),
            "ApplyRowUpdatesAndZero kernel");
}

void CudaDevice::ApplyRowUpdates(const math::SparseOptimizerConfig& config, int dim,
                                 const uint32_t* slots, int n, const float* grads, int grad_stride,
                                 float* rows, int row_stride) {
  if (Ready()) {
    CheckCuda(
        cuda::ApplyRowUpdates(stream_, config, dim, slots, n, grads, grad_stride, rows, row_stride),
        "ApplyRowUpdates kernel");
  }
}

}  // namespace herald::worker
