#pragma once
// A device that does no work (testonly): every operation returns at once,
// copies move nothing, memory reads as zeros (so gradients are zero and the
// model never changes). It keeps the whole pipeline around a device (the
// scheduler, the PS, the worker's plan execution, transfers and
// collectives) real while the device costs nothing, so a benchmark
// (bench/pipeline_bench) measures what that pipeline costs per sample.
// Only herald_worker_with_test_hooks and tests create it (RegisterNullDevice);
// herald_worker has no "null" device.

#include <cstddef>
#include <cstring>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "worker/device/device.h"

namespace herald::worker {

class NullDevice final : public Device {
 public:
  ~NullDevice() override;
  std::string name() const override { return "null"; }
  // Zero pages mapped on first touch: nothing ever touches them.
  void* AllocateBytes(size_t bytes) override;
  void FreeBytes(void* p) override;
  void CopyToDevice(const void*, void*, size_t) override {}
  // Device memory reads as zeros: the host's copy is zeros (what a real
  // copy writes, at the cost of writing it).
  void CopyToHost(const void*, void* host, size_t bytes) override {
    if (bytes > 0) std::memset(host, 0, bytes);
  }
  void CopyOnDevice(const void*, void*, size_t) override {}
  void Fill(float*, size_t, float) override {}
  void Synchronize() override {}

  void Gemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*,
            int) override {}
  void Axpy(size_t, float, const float*, float*) override {}
  void AddRowVector(const float*, int, int, float*) override {}
  void SumRows(const float*, int, int, float*) override {}
  void Copy2D(const float*, int, int, int, float*, int) override {}
  void Add2D(const float*, int, int, int, float*, int) override {}
  void Relu(const float*, size_t, float*) override {}
  void ReluBackward(const float*, const float*, size_t, float*) override {}
  void Sigmoid(const float*, size_t, float*) override {}
  void SigmoidCrossEntropy(const float*, const float*, int, float, float*, float*) override {}
  void SquaredError(const float*, const float*, int, float, float*, float*) override {}
  void Multiply2D(const float*, int, const float*, int, int, int, float*, int, bool) override {}
  void AddScaledRows(const float*, const float*, int, int, int, float*, int) override {}
  void RowDots(const float*, int, const float*, int, int, int, float*) override {}
  void DropoutMask(uint64_t, uint64_t, const uint32_t*, int, int, float, float*) override {}
  void FmForward(const float*, int, int, int, int, float*) override {}
  void FmBackward(const float*, int, const float*, int, int, int, float*, int) override {}
  void DotInteractionForward(const float*, int, int, int, int, float*, int) override {}
  void DotInteractionBackward(const float*, int, const float*, int, int, int, int, float*,
                              int) override {}
  void EmbeddingBagForward(const float*, int, const uint32_t*, const uint32_t*, const float*, int,
                           int, Pooling, float*, int) override {}
  void EmbeddingBagBackward(const float*, int, const uint32_t*, const uint32_t*, const float*, int,
                            int, Pooling, float*, int) override {}
  void GatherRows(const float*, int, const uint32_t*, int, int, float*) override {}
  void ScatterRows(const float*, const uint32_t*, int, int, int, float*) override {}
  void ZeroRows(const uint32_t*, int, int, int, float*) override {}
  void ApplyOptimizer(const math::SparseOptimizerConfig&, size_t, const float*, float*,
                      float*) override {}
  void ApplyRowUpdates(const math::SparseOptimizerConfig&, int, const uint32_t*, int, const float*,
                       int, float*, int) override {}

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<void*, size_t> mapped_ ABSL_GUARDED_BY(mu_);  // address → bytes
};

// Makes "null" a device name CreateDevice and DescribeDevice accept in this
// process (device_factory.h). Idempotent.
void RegisterNullDevice();

}  // namespace herald::worker
