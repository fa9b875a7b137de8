#pragma once
// A pool that never queues: a task starts at once on an idle thread, or on a
// new thread when every thread is busy. For tasks that block on each other
// (a fetch waiting for a commit that another task's report triggers), where
// a fixed-size pool could deadlock. Threads are kept for reuse, so the pool
// holds as many threads as were ever busy at once.

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace herald {

// Thread-safe. The destructor waits for running tasks and joins the threads.
class CachedThreadPool {
 public:
  // Every thread is named `name` (thread_name.h).
  explicit CachedThreadPool(std::string name = "pool") : name_(std::move(name)) {}
  ~CachedThreadPool();
  CachedThreadPool(const CachedThreadPool&) = delete;
  CachedThreadPool& operator=(const CachedThreadPool&) = delete;

  // Starts `task` without waiting for any other task.
  void Run(std::function<void()> task);

  // Threads created so far.
  size_t num_threads();

  // Waits until no task is queued or running.
  void WaitUntilIdle();

 private:
  void Loop();

  const std::string name_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  // Threads waiting for a task. Invariant: queue_.size() <= waiting_, so
  // every queued task has a thread that will take it.
  size_t waiting_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace herald
