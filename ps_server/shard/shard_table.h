#pragma once
// One embedding table on one shard, split into stripes so a request's keys
// can be served by several threads at once. A key's stripe depends only on
// the key; each stripe is an EmbeddingTable behind its own mutex.
//
// With a disk tier (a RowStore), the stripes hold the rows in memory and
// the store the rest: a row is in memory, on disk, or (never trained) in
// neither; a row in memory is the current one even when the store has an
// older copy. Moving rows between the two is DiskTier's (disk_tier.h).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/rng.h"
#include "ps_server/store/embedding_table.h"
#include "ps_server/store/row_store.h"

namespace herald::ps {

// An iteration as a row's last-use stamp (EmbeddingTable::Touch).
inline uint32_t UseStamp(uint64_t iteration) {
  return static_cast<uint32_t>(std::min<uint64_t>(iteration, UINT32_MAX));
}

class ShardTable {
 public:
  struct Stripe {
    explicit Stripe(const TableOptions& o) : table(o) {}
    absl::Mutex mu;
    EmbeddingTable table ABSL_GUARDED_BY(mu);
    // Every iteration before this one is committed to the stripe's rows
    // (set by the owner's commits: JobShard).
    uint64_t committed ABSL_GUARDED_BY(mu) = 0;
  };

  // options.max_rows caps the whole table (all stripes together). `store`
  // (may be null: no disk tier) must outlive the table.
  ShardTable(const TableOptions& options, uint32_t num_stripes, RowStore* store = nullptr);

  const TableOptions& options() const { return options_; }
  uint32_t dim() const { return options_.dim; }
  uint32_t row_floats() const { return row_floats_; }
  uint32_t num_stripes() const { return static_cast<uint32_t>(stripes_.size()); }
  uint32_t StripeOf(Key key) const {
    return static_cast<uint32_t>((Mix64(key) >> 32) % stripes_.size());
  }
  Stripe& stripe(uint32_t i) { return *stripes_[i]; }

  // The row of `key` in `stripe`'s memory: found, read from the disk tier
  // (counted in disk_reads() and in *read_from_disk if given), or created,
  // enforcing the table-wide row cap; marked used by iteration `use`.
  // Errors: RESOURCE_EXHAUSTED naming the table, the cap and the key; the
  // store's errors.
  absl::StatusOr<uint32_t> FindOrCreate(Stripe& stripe, Key key, uint32_t use,
                                        uint64_t* read_from_disk = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe.mu);
  // Writes `key`'s row and version to `row` and `version` without storing
  // anything: from memory, from disk, or the row it would start as.
  absl::Status Read(Stripe& stripe, Key key, float* row, uint64_t* version)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe.mu);
  // Deletes the rows of `keys` (all of `stripe`) from memory and the disk
  // tier; returns how many of them the table held. Errors: the store's.
  absl::StatusOr<uint64_t> Erase(Stripe& stripe, const std::vector<Key>& keys)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe.mu);
  // Counts a row stored straight to the disk tier (a restore beyond the
  // memory budget) in rows().
  void CountStoredRow() { rows_.fetch_add(1, std::memory_order_relaxed); }

  // Rows of the table, in memory and on disk.
  uint64_t rows() const { return rows_.load(std::memory_order_relaxed); }
  // Rows read from disk by FindOrCreate (on a request's critical path).
  uint64_t disk_reads() const { return disk_reads_.load(std::memory_order_relaxed); }
  // Locks each stripe in turn.
  uint64_t MemoryBytes();
  // Rows in memory; locks each stripe in turn.
  uint64_t ResidentRows();
  uint64_t RawRowBytes() const { return rows() * row_floats_ * sizeof(float); }

 private:
  absl::StatusOr<uint32_t> FindOrCreateUntouched(Stripe& stripe, Key key, uint64_t* read_from_disk)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe.mu);

  TableOptions options_;
  uint32_t row_floats_;
  RowStore* store_;
  std::atomic<uint64_t> rows_{0};
  std::atomic<uint64_t> disk_reads_{0};
  std::vector<std::unique_ptr<Stripe>> stripes_;
};

// Positions of a key list grouped by stripe (a counting sort): the keys of
// stripe s are keys[order[begin[s]]] .. keys[order[begin[s+1] - 1]], in
// their original relative order.
struct StripeGroups {
  std::vector<uint32_t> begin;  // num_stripes + 1 entries
  std::vector<uint32_t> order;
};
StripeGroups GroupByStripe(const ShardTable& table, const Key* keys, size_t n);

// One unit of parallel work of a request: the keys of one block in one stripe.
struct StripeWork {
  size_t block;
  uint32_t stripe;
};

// A multi-block request split by stripe: groups[b] for block b, and the
// (block, stripe) pairs that hold at least one key.
struct StripePlan {
  std::vector<StripeGroups> groups;
  std::vector<StripeWork> items;
};

}  // namespace herald::ps
