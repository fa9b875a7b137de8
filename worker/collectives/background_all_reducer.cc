#include "worker/collectives/background_all_reducer.h"

#include <utility>

namespace herald::worker {

BackgroundAllReducer::BackgroundAllReducer(std::unique_ptr<DenseAllReducer> inner)
    : inner_(std::move(inner)) {}

BackgroundAllReducer::~BackgroundAllReducer() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](uint32_t* running) { return *running == 0; }, &running_));
}

absl::Status BackgroundAllReducer::AllReduceSum(float* data, size_t n) {
  return inner_->AllReduceSum(data, n);
}

void BackgroundAllReducer::StartAllReduceSum(float* data, size_t n) {
  {
    absl::MutexLock lock(&mu_);
    ++running_;
  }
  // One thread: the buckets are reduced in the order started.
  thread_.Schedule([this, data, n] {
    bool failed;
    {
      absl::MutexLock lock(&mu_);
      failed = !status_.ok();
    }
    absl::Status s = failed ? absl::OkStatus() : inner_->AllReduceSum(data, n);
    absl::MutexLock lock(&mu_);
    status_.Update(std::move(s));
    --running_;
  });
}

absl::Status BackgroundAllReducer::FinishAllReduceSum() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](uint32_t* running) { return *running == 0; }, &running_));
  return std::exchange(status_, absl::OkStatus());
}

}  // namespace herald::worker
