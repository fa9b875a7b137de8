#pragma once
// DenseAllReducer over NCCL for CUDA workers, each on a GPU of its own
// (NCCL does not support two ranks on one GPU; the scheduler then picks
// Gloo, see scheduler/jobs/dense_collective.h). Rank 0 creates the NCCL
// unique id and publishes it in the KvStore under "<prefix>/unique_id";
// every rank reads it and joins the communicator.
//
// No hang: the communicator is non-blocking; setup and every all-reduce are
// polled (ncclCommGetAsyncError and the stream) until done, an NCCL error
// (a peer died: Unavailable) or the timeout (DeadlineExceeded); on either
// error the communicator is aborted and every later call fails at once.
//
// Every rank gets the same bits (NCCL reduces each element once, then
// copies it: ring and tree algorithms alike).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/collectives/all_reducer.h"
#include "worker/collectives/kv_store.h"
#include "worker/device/cuda/cuda_device.h"

struct ncclComm;

namespace herald::worker {

struct NcclOptions {
  std::string prefix = "nccl";  // key prefix in the store (e.g. job id)
  absl::Duration timeout = absl::Seconds(60);
};

class NcclAllReducer final : public DenseAllReducer {
 public:
  // Blocks until all `size` ranks joined or the timeout passed. `device`
  // must outlive the reducer; the all-reduce runs on its stream, ordered
  // after the work already queued there. `store` is used only in the call.
  static absl::StatusOr<std::unique_ptr<NcclAllReducer>> Connect(KvStore* store, int rank, int size,
                                                                 CudaDevice* device,
                                                                 const NcclOptions& options);
  ~NcclAllReducer() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // REQUIRES: `data` is memory of the reducer's device. Returns once the
  // sum is in `data`.
  absl::Status AllReduceSum(float* data, size_t n) override;

 private:
  NcclAllReducer(int rank, int size, CudaDevice* device, absl::Duration timeout);
  // Polls until the communicator's pending work (and, when `stream_work`,
  // the device stream) is done. `what` names the operation in errors.
  absl::Status Wait(const char* what, bool stream_work);
  // Aborts the communicator after an error; keeps `error` for later calls.
  absl::Status Fail(absl::Status error);

  int rank_, size_;
  CudaDevice* device_;
  absl::Duration timeout_;
  ncclComm* comm_ = nullptr;
  absl::Status failed_;
};

}  // namespace herald::worker
