#include "worker/collectives/gloo_all_reducer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "gloo/allgather.h"
#include "gloo/alltoall.h"

namespace herald::worker {

absl::StatusOr<std::unique_ptr<GlooAllReducer>> GlooAllReducer::Connect(
    KvStore* store, int rank, int size, const GlooOptions& options) {
  absl::StatusOr<std::shared_ptr<gloo::Context>> context = ConnectGloo(store, rank, size, options);
  if (!context.ok()) return context.status();
  return std::unique_ptr<GlooAllReducer>(new GlooAllReducer(rank, size, *std::move(context)));
}

GlooAllReducer::GlooAllReducer(int rank, int size, std::shared_ptr<gloo::Context> context)
    : rank_(rank), size_(size), context_(std::move(context)) {}

GlooAllReducer::~GlooAllReducer() = default;

absl::Status GlooAllReducer::AllReduceSum(float* data, size_t n) {
  if (size_ == 1 || n == 0) return absl::OkStatus();
  // Reduce-scatter by all-to-all: rank r receives every rank's chunk r and
  // sums it in rank order; then all-gather. Each element is reduced once, by
  // its chunk's owner, so every rank gets the same bits, and the order (rank
  // 0 + rank 1 + …) is the order the parameter servers use.
  const size_t chunk = (n + size_ - 1) / size_;
  send_.resize(chunk * size_);
  std::copy(data, data + n, send_.begin());
  std::fill(send_.begin() + n, send_.end(), 0.0f);  // the last chunk's padding
  receive_.resize(chunk * size_);
  owned_.resize(chunk);
  gathered_.resize(chunk * size_);
  try {
    gloo::AlltoallOptions scatter(context_);
    scatter.setInput(send_.data(), send_.size());
    scatter.setOutput(receive_.data(), receive_.size());
    scatter.setTag(1);
    gloo::alltoall(scatter);
    std::copy(receive_.begin(), receive_.begin() + chunk, owned_.begin());
    for (int r = 1; r < size_; ++r) {
      const float* part = receive_.data() + r * chunk;
      for (size_t i = 0; i < chunk; ++i) owned_[i] += part[i];
    }
    gloo::AllgatherOptions gather(context_);
    gather.setInput(owned_.data(), owned_.size());
    gather.setOutput(gathered_.data(), gathered_.size());
    gather.setTag(2);
    gloo::allgather(gather);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("gloo all-reduce of ", n, " floats at rank ", rank_, ": ", e.what()));
  }
  std::copy(gathered_.begin(), gathered_.begin() + n, data);
  return absl::OkStatus();
}

}  // namespace herald::worker
