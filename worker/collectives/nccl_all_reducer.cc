#include "worker/collectives/nccl_all_reducer.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status.h"

namespace herald::worker {
namespace {

std::string NcclError(ncclResult_t r) {
  return absl::StrCat(ncclGetErrorString(r), " (", ncclGetLastError(nullptr), ")");
}

}  // namespace

NcclAllReducer::NcclAllReducer(int rank, int size, CudaDevice* device, absl::Duration timeout)
    : rank_(rank), size_(size), device_(device), timeout_(timeout) {}

absl::StatusOr<std::unique_ptr<NcclAllReducer>> NcclAllReducer::Connect(
    KvStore* store, int rank, int size, CudaDevice* device, const NcclOptions& options) {
  if (size < 1 || rank < 0 || rank >= size) {
    return absl::InvalidArgumentError(absl::StrCat("NCCL rank ", rank, " of ", size));
  }
  const std::string key = options.prefix + "/unique_id";
  ncclUniqueId id;
  if (rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) {
      return absl::InternalError(absl::StrCat("ncclGetUniqueId: ", NcclError(r)));
    }
    HERALD_RETURN_IF_ERROR(store->Set(key, std::string(id.internal, sizeof(id.internal))));
  }
  HERALD_ASSIGN_OR_RETURN(std::vector<std::string> values, store->Get({key}, options.timeout));
  if (values[0].size() != sizeof(id.internal)) {
    return absl::InternalError(
        absl::StrCat(key, ": ", values[0].size(), " bytes, want ", sizeof(id.internal)));
  }
  std::memcpy(id.internal, values[0].data(), sizeof(id.internal));

  std::unique_ptr<NcclAllReducer> reducer(new NcclAllReducer(rank, size, device, options.timeout));
  if (cudaSetDevice(device->ordinal()) != cudaSuccess) {
    return absl::InternalError(absl::StrCat("cudaSetDevice(", device->ordinal(), ") failed"));
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t r = ncclCommInitRankConfig(&reducer->comm_, size, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    return reducer->Fail(absl::UnavailableError(
        absl::StrCat("ncclCommInitRankConfig (rank ", rank, " of ", size, "): ", NcclError(r))));
  }
  HERALD_RETURN_IF_ERROR(reducer->Wait("joining the NCCL communicator", /*stream_work=*/false));
  return reducer;
}

NcclAllReducer::~NcclAllReducer() {
  if (comm_ == nullptr) return;  // never joined, or aborted after an error
  cudaSetDevice(device_->ordinal());
  // Finalize flushes pending work; it is non-blocking, so wait (bounded)
  // before destroying. A failed wait has aborted the communicator.
  const ncclResult_t r = ncclCommFinalize(comm_);
  if (r != ncclSuccess && r != ncclInProgress) {
    ncclCommAbort(comm_);
  } else if (Wait("finalizing the NCCL communicator", /*stream_work=*/false).ok()) {
    ncclCommDestroy(comm_);
  }
}

absl::Status NcclAllReducer::Fail(absl::Status error) {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
  if (failed_.ok()) failed_ = error;
  return error;
}

absl::Status NcclAllReducer::Wait(const char* what, bool stream_work) {
  const absl::Time deadline = absl::Now() + timeout_;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
    if (r != ncclSuccess) state = r;
    if (state != ncclSuccess && state != ncclInProgress) {
      return Fail(
          absl::UnavailableError(absl::StrCat(what, " failed on rank ", rank_, " of ", size_, ": ",
                                              NcclError(state), " (a peer may be gone)")));
    }
    bool done = state == ncclSuccess;
    if (done && stream_work) {
      const cudaError_t q = cudaStreamQuery(device_->stream());
      if (q != cudaSuccess && q != cudaErrorNotReady) {
        return Fail(absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(q))));
      }
      done = q == cudaSuccess;
    }
    if (done) return absl::OkStatus();
    if (absl::Now() > deadline) {
      return Fail(absl::DeadlineExceededError(
          absl::StrCat(what, ": rank ", rank_, " of ", size_, " not done after ",
                       absl::FormatDuration(timeout_), " (a peer may be stuck or gone)")));
    }
    std::this_thread::yield();  // polling: NCCL gives no blocking wait that can time out
  }
}

absl::Status NcclAllReducer::AllReduceSum(float* data, size_t n) {
  if (!failed_.ok()) return failed_;
  HERALD_RETURN_IF_ERROR(device_->status());
  if (n == 0) return absl::OkStatus();
  if (cudaSetDevice(device_->ordinal()) != cudaSuccess) {
    return Fail(absl::InternalError(absl::StrCat("cudaSetDevice(", device_->ordinal(), ")")));
  }
  const ncclResult_t r = ncclAllReduce(data, data, n, ncclFloat, ncclSum, comm_, device_->stream());
  if (r != ncclSuccess && r != ncclInProgress) {
    return Fail(absl::UnavailableError(absl::StrCat("ncclAllReduce: ", NcclError(r))));
  }
  return Wait("the NCCL all-reduce", /*stream_work=*/true);
}

}  // namespace herald::worker
