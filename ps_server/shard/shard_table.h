#pragma once
// One embedding table on one shard, split into stripes so a request's keys
// can be served by several threads at once. A key's stripe depends only on
// the key; each stripe is an EmbeddingTable behind its own mutex.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/rng.h"
#include "ps_server/store/embedding_table.h"

namespace herald::ps {

class ShardTable {
 public:
  struct Stripe {
    explicit Stripe(const TableOptions& o) : table(o) {}
    absl::Mutex mu;
    EmbeddingTable table ABSL_GUARDED_BY(mu);
  };

  // options.max_rows caps the whole table (all stripes together).
  ShardTable(const TableOptions& options, uint32_t num_stripes);

  const TableOptions& options() const { return options_; }
  uint32_t dim() const { return options_.dim; }
  uint32_t row_floats() const { return row_floats_; }
  uint32_t num_stripes() const { return static_cast<uint32_t>(stripes_.size()); }
  uint32_t StripeOf(Key key) const {
    return static_cast<uint32_t>((Mix64(key) >> 32) % stripes_.size());
  }
  Stripe& stripe(uint32_t i) { return *stripes_[i]; }

  // FindOrCreate within `stripe`, enforcing the table-wide row cap.
  // Errors: RESOURCE_EXHAUSTED naming the table, the cap and the key.
  absl::StatusOr<uint32_t> FindOrCreate(Stripe& stripe, Key key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe.mu);

  uint64_t rows() const { return rows_.load(std::memory_order_relaxed); }
  // Locks each stripe in turn.
  uint64_t MemoryBytes();
  uint64_t RawRowBytes() const { return rows() * row_floats_ * sizeof(float); }

 private:
  TableOptions options_;
  uint32_t row_floats_;
  std::atomic<uint64_t> rows_{0};
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
