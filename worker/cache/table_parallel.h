#pragma once
// Work on every embedding table at once: the cache's bookkeeping of one
// table (its slot arrays, its key map) is its own, so tables may be worked
// on by different threads, and the outcome does not depend on how many.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>

#include "common/thread_pool.h"

namespace herald::worker {

// fn(t) for every t in [0, tables), each once: on the calling thread alone
// (`pool` null), or on it and `pool`'s threads, each taking the next table
// nobody took. Returns when all are done.
inline void ForEachTable(ThreadPool* pool, size_t tables, const std::function<void(size_t)>& fn) {
  const size_t shares = pool == nullptr ? 1 : std::min(pool->num_threads() + 1, tables);
  if (shares <= 1) {
    for (size_t t = 0; t < tables; ++t) fn(t);
    return;
  }
  std::atomic<size_t> next{0};
  pool->ParallelFor(shares, 1, [&](size_t, size_t) {
    for (size_t t = next.fetch_add(1); t < tables; t = next.fetch_add(1)) fn(t);
  });
}

}  // namespace herald::worker
