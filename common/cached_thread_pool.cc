#include "common/cached_thread_pool.h"

#include <utility>

#include "common/thread_name.h"

namespace herald {

CachedThreadPool::~CachedThreadPool() {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

void CachedThreadPool::Run(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(task));
  if (queue_.size() > waiting_) threads_.emplace_back([this] { Loop(); });
}

size_t CachedThreadPool::num_threads() {
  absl::MutexLock lock(&mu_);
  return threads_.size();
}

void CachedThreadPool::WaitUntilIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](CachedThreadPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
        return p->queue_.empty() && p->waiting_ == p->threads_.size();
      },
      this));
}

void CachedThreadPool::Loop() {
  NameThisThread(name_);
  absl::MutexLock lock(&mu_);
  while (true) {
    ++waiting_;
    mu_.Await(absl::Condition(
        +[](CachedThreadPool* p)
             ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) { return !p->queue_.empty() || p->stopping_; },
        this));
    --waiting_;
    if (queue_.empty()) return;  // stopping
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    task();
    task = nullptr;
    mu_.Lock();
  }
}

}  // namespace herald
