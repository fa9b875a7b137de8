#pragma once
// Work on every embedding table at once: the cache's bookkeeping of one
// table (its slot arrays, its key map) is its own, so tables may be worked
// on by different threads, and the outcome does not depend on how many.

#include <cstddef>
#include <functional>

#include "common/thread_pool.h"

namespace herald::worker {

// fn(t) for every t in [0, tables), each once: on the calling thread alone
// (`pool` null), or on it and `pool`'s threads (ThreadPool::ForEachItem).
// Returns when all are done.
inline void ForEachTable(ThreadPool* pool, size_t tables, const std::function<void(size_t)>& fn) {
  if (pool == nullptr) {
    for (size_t t = 0; t < tables; ++t) fn(t);
    return;
  }
  pool->ForEachItem(tables, pool->num_threads(), fn);
}

}  // namespace herald::worker
