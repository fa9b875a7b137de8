#include "worker/collectives/background_all_reducer.h"

namespace herald::worker {

BackgroundAllReducer::BackgroundAllReducer(std::unique_ptr<DenseAllReducer> inner)
    : inner_(std::move(inner)) {}

BackgroundAllReducer::~BackgroundAllReducer() {
  if (done_.has_value()) done_->WaitForNotification();
}

absl::Status BackgroundAllReducer::AllReduceSum(float* data, size_t n) {
  return inner_->AllReduceSum(data, n);
}

void BackgroundAllReducer::StartAllReduceSum(float* data, size_t n) {
  done_.emplace();
  thread_.Schedule([this, data, n] {
    status_ = inner_->AllReduceSum(data, n);
    done_->Notify();
  });
}

absl::Status BackgroundAllReducer::FinishAllReduceSum() {
  if (!done_.has_value()) return absl::OkStatus();
  done_->WaitForNotification();
  done_.reset();
  return std::exchange(status_, absl::OkStatus());
}

}  // namespace herald::worker
