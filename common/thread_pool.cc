#include "common/thread_pool.h"

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "common/thread_name.h"

namespace herald {
namespace {

// The pool whose Loop() runs on this thread; null on other threads.
thread_local const ThreadPool* current_pool = nullptr;

}  // namespace

ThreadPool::ThreadPool(size_t num_threads, const std::string& name) {
  threads_.reserve(num_threads);
  for (size_t i = 0; i < num_threads; ++i) {
    threads_.emplace_back([this, thread_name = absl::StrCat(name, i)] {
      NameThisThread(thread_name);
      Loop();
    });
  }
}

ThreadPool::~ThreadPool() { Stop(); }

void ThreadPool::Schedule(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      queue_.push_back(std::move(task));
      return;
    }
  }
  task();
}

bool ThreadPool::OnPoolThread() const { return current_pool == this; }

void ThreadPool::Loop() {
  current_pool = this;
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ThreadPool* p)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) { return p->stopping_ || !p->queue_.empty(); },
          this));
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void ThreadPool::ParallelFor(size_t n, size_t min_chunk,
                             const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  min_chunk = std::max<size_t>(min_chunk, 1);
  size_t chunks = std::min(std::max<size_t>(threads_.size(), 1), (n + min_chunk - 1) / min_chunk);
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  size_t per = (n + chunks - 1) / chunks;
  absl::BlockingCounter done(static_cast<int>(chunks - 1));
  for (size_t c = 1; c < chunks; ++c) {
    size_t begin = c * per, end = std::min(n, begin + per);
    Schedule([&fn, &done, begin, end] {
      if (begin < end) fn(begin, end);
      done.DecrementCount();
    });
  }
  fn(0, std::min(n, per));
  done.Wait();
}

void ThreadPool::ForEachItem(size_t n, size_t shares, const std::function<void(size_t)>& fn) {
  TakeItems(n, shares, fn, {}, /*caller_takes_items=*/true);
}

void ThreadPool::ForEachItemOnPool(size_t n, size_t shares, const std::function<void(size_t)>& fn,
                                   const std::function<void()>& meanwhile) {
  TakeItems(n, shares, fn, meanwhile, /*caller_takes_items=*/OnPoolThread());
}

void ThreadPool::TakeItems(size_t n, size_t shares, const std::function<void(size_t)>& fn,
                           const std::function<void()>& meanwhile, bool caller_takes_items) {
  shares = std::min(shares, threads_.size());
  // Pool tasks: one per share, less the caller's own where it takes items.
  const size_t tasks = std::min(shares > 0 && caller_takes_items ? shares - 1 : shares, n);
  std::atomic<size_t> next{0};
  auto take_items = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  absl::BlockingCounter done(static_cast<int>(tasks));
  for (size_t t = 0; t < tasks; ++t) {
    Schedule([&] {
      take_items();
      done.DecrementCount();
    });
  }
  if (meanwhile) meanwhile();
  if (caller_takes_items || tasks == 0) take_items();
  done.Wait();
}

void ThreadPool::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace herald
