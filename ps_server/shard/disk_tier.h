#pragma once
// A job shard's tables larger than its memory: a memory budget, a RowStore
// on disk for the rows beyond it, and the scheduler's look-ahead that loads
// rows before the iterations that read them (docs/parameter-server.md,
// "Tables larger than memory").
//
//   Memory   The rows in memory (their floats, metadata and index share,
//            EmbeddingTable::BytesPerRow) stay within the budget after every
//            commit: EvictOverBudget moves the least recently used rows to
//            disk (writing those that changed since they were loaded) until
//            they take `evict_to` of it. Between commits, the rows the
//            iterations in flight and the look-ahead load come on top.
//   Disk     ShardTable::FindOrCreate reads a row it does not hold from the
//            store (a read on a request's critical path, counted).
//   Ahead    LookAhead(t, keys) queues the keys iteration t will touch; once
//            iteration t - lead commits, a background thread loads those on
//            disk into memory and marks every one used by t, so no eviction
//            before t commits drops it.
//
// Exactness: rows move between memory and disk whole (values, optimizer
// state, version), only while no request holds a row index (evictions run
// in the commit's exclusive window), and a load never installs a copy older
// than the newest (an eviction between reading a row from disk and
// installing it voids the read). So a job with a disk tier computes what
// the same job all in memory does, bit for bit.
// Thread-safe.

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/thread_pool.h"
#include "ps_server/shard/shard_table.h"
#include "ps_server/store/row_store.h"

namespace herald::ps {

struct DiskTierOptions {
  // Bytes of rows kept in memory (> 0).
  uint64_t memory_budget = 0;
  // The store's directory and owner (RowStore::Open).
  std::string path;
  RowStoreOwner owner;
  // The store's block cache and each of its two memtables.
  uint64_t cache_bytes = 8 << 20;
  uint64_t memtable_bytes = 16 << 20;
  // An eviction pass leaves the rows in memory at this fraction of the
  // budget, so that passes (each a scan of the rows in memory) are rare.
  double evict_to = 0.8;
  // Look-ahead requests queued beyond this many are dropped (counted): the
  // loader is behind and the rows will be read on the critical path.
  uint32_t max_queued = 64;
  // Iteration t's rows are loaded once iteration t - lead has committed:
  // early enough to be in memory when t comes, late enough that the rows t
  // reads exist by then (a request that comes before its rows were ever
  // trained finds nothing to load) and that few rows are held for it.
  uint32_t lead = 2;
};

// One table's keys an iteration will touch.
struct LookAheadKeys {
  uint32_t table;
  std::vector<Key> keys;
};

struct DiskTierCounters {
  uint64_t rows_loaded_ahead = 0;    // read from disk by the look-ahead
  uint64_t look_ahead_requests = 0;  // LookAhead calls
  uint64_t look_ahead_dropped = 0;   // requests dropped (queue full or already committed)
  uint64_t rows_evicted = 0;         // moved out of memory
  uint64_t rows_written = 0;         // of which written to disk (changed since loaded)
  uint64_t eviction_passes = 0;
  double eviction_ms_total = 0;
};

// Rows of one or more iterations read from disk: on a request's critical
// path, and ahead by the look-ahead.
struct DiskReads {
  uint64_t critical = 0;
  uint64_t ahead = 0;
  DiskReads& operator+=(const DiskReads& o) {
    critical += o.critical;
    ahead += o.ahead;
    return *this;
  }
};

class DiskTier {
 public:
  // Opens the store. Errors: RowStore::Open's; InvalidArgument for a zero
  // budget or an empty path.
  static absl::StatusOr<std::unique_ptr<DiskTier>> Open(const DiskTierOptions& options);
  // Stops the loader and removes the store's directory (its rows mean
  // nothing without the shard's memory).
  ~DiskTier();

  const RowStore& store() const { return *store_; }
  RowStore& store() { return *store_; }
  const DiskTierOptions& options() const { return options_; }

  // Starts the look-ahead loader over `tables`, taking `rows_mu` shared
  // while it touches them (the shard's rows lock). Call once, before
  // LookAhead.
  void StartLoader(std::vector<ShardTable*> tables, absl::Mutex* rows_mu);
  // Queues iteration `iteration`'s keys (validated by the caller).
  void LookAhead(uint64_t iteration, std::vector<LookAheadKeys> keys);

  // After iteration `committed` committed: evicts down to evict_to of the
  // budget if the rows in memory exceed it; never a row used by a later
  // iteration. REQUIRES: the shard's rows lock held exclusively. On error
  // (writing to disk failed) nothing was evicted.
  absl::Status EvictOverBudget(const std::vector<std::unique_ptr<ShardTable>>& tables,
                               uint64_t committed, ThreadPool* pool);

  // A restored row: kept in memory while the budget allows, else written
  // to disk (batched: FinishRestore writes the rest).
  absl::Status Restore(ShardTable& table, Key key, uint64_t version, const float* row);
  absl::Status FinishRestore();

  DiskTierCounters counters() ABSL_LOCKS_EXCLUDED(counters_mu_);
  // Rows iteration `iteration`'s requests read from disk.
  void CountCritical(uint64_t iteration, uint64_t rows) {
    by_iteration_[iteration % kIterationSlots].critical += rows;
  }
  // Iteration `iteration`'s disk reads, cleared (at its commit).
  DiskReads TakeIteration(uint64_t iteration) {
    IterationReads& slot = by_iteration_[iteration % kIterationSlots];
    return {slot.critical.exchange(0), slot.ahead.exchange(0)};
  }

 private:
  explicit DiskTier(DiskTierOptions options, std::unique_ptr<RowStore> store);
  void LoaderLoop();
  void Load(uint64_t iteration, const LookAheadKeys& block);

  const DiskTierOptions options_;
  std::unique_ptr<RowStore> store_;

  // The next iteration to commit (look-ahead for earlier ones is too late);
  // written under queue_mu_ (the loader waits for it).
  std::atomic<uint64_t> next_commit_{0};

  // Restore: rows kept in memory so far (bytes) and rows waiting to be written.
  uint64_t restored_bytes_ = 0;
  struct OwnedRow {
    uint32_t table;
    Key key;
    uint64_t version;
    std::vector<float> row;
  };
  std::vector<OwnedRow> restore_batch_;

  // Disk reads by iteration, a slot per iteration modulo kIterationSlots: an
  // iteration's requests and look-ahead come after the iteration
  // kIterationSlots before it committed (fetches wait for the previous
  // commit, the look-ahead for `lead` before).
  static constexpr size_t kIterationSlots = 64;
  struct IterationReads {
    std::atomic<uint64_t> critical{0};
    std::atomic<uint64_t> ahead{0};
  };
  std::array<IterationReads, kIterationSlots> by_iteration_;

  std::vector<ShardTable*> tables_;
  absl::Mutex* rows_mu_ = nullptr;
  absl::Mutex queue_mu_;
  std::deque<std::pair<uint64_t, std::vector<LookAheadKeys>>> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  std::thread loader_;

  absl::Mutex counters_mu_;
  DiskTierCounters counters_ ABSL_GUARDED_BY(counters_mu_);
  bool warned_window_ = false;  // the commit path's alone
};

}  // namespace herald::ps
