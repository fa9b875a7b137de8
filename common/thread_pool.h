#pragma once
// A fixed-size pool of worker threads.

#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace herald {

// Thread-safe. Threads start in the constructor and are joined by Stop() (also
// called by the destructor); tasks queued before Stop() still run.
class ThreadPool {
 public:
  // REQUIRES: num_threads >= 1. Thread i is named `name` + i (thread_name.h).
  explicit ThreadPool(size_t num_threads, const std::string& name = "pool");
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t num_threads() const { return threads_.size(); }

  // Queues `task`. After Stop() the task runs inline on the caller's thread.
  void Schedule(std::function<void()> task);

  // Runs fn(begin, end) over [0, n) split into at most num_threads() chunks of
  // at least `min_chunk` items and waits for all of them. The calling thread
  // runs one chunk itself, so this never deadlocks on a busy pool.
  void ParallelFor(size_t n, size_t min_chunk, const std::function<void(size_t, size_t)>& fn);

  // fn(i) for every i in [0, n), each exactly once, by the caller and at
  // most `shares` - 1 pool threads (ParallelFor's chunks), each taking the
  // next item nobody took, so a slow item holds up no other. Returns when
  // all are done.
  void ForEachItem(size_t n, size_t shares, const std::function<void(size_t)>& fn);

  // fn(i) for every i in [0, n), each exactly once, by at most `shares`
  // pool threads, each taking the next item nobody took, while the caller
  // runs meanwhile() (if given) and then only waits: the caller's CPU time
  // is its own work alone, whatever the cores. Called from one of this
  // pool's threads, the caller takes items too once meanwhile() returns,
  // so a nested call cannot deadlock. Returns when all are done.
  void ForEachItemOnPool(size_t n, size_t shares, const std::function<void(size_t)>& fn,
                         const std::function<void()>& meanwhile = {});

  // Whether the calling thread is one of this pool's.
  bool OnPoolThread() const;

  // Finishes queued tasks and joins the threads. Idempotent.
  void Stop();

 private:
  void Loop();
  // ForEachItem and ForEachItemOnPool: fn(i) for every i by up to `shares`
  // sharers (the caller one of them if `caller_takes_items`), meanwhile()
  // on the caller first.
  void TakeItems(size_t n, size_t shares, const std::function<void(size_t)>& fn,
                 const std::function<void()>& meanwhile, bool caller_takes_items);

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace herald
