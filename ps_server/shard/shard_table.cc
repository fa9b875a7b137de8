#include "ps_server/shard/shard_table.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace herald::ps {

ShardTable::ShardTable(const TableOptions& options, uint32_t num_stripes, RowStore* store)
    : options_(options),
      row_floats_(math::RowFloats(options.optimizer.kind, options.dim)),
      store_(store) {
  TableOptions per_stripe = options;
  per_stripe.max_rows = 0;  // enforced here, across stripes
  for (uint32_t i = 0; i < std::max<uint32_t>(num_stripes, 1); ++i) {
    stripes_.push_back(std::make_unique<Stripe>(per_stripe));
  }
}

absl::StatusOr<uint32_t> ShardTable::FindOrCreate(Stripe& stripe, Key key, uint32_t use,
                                                  uint64_t* read_from_disk) {
  absl::StatusOr<uint32_t> row = FindOrCreateUntouched(stripe, key, read_from_disk);
  if (row.ok()) stripe.table.Touch(*row, use);
  return row;
}

absl::StatusOr<uint32_t> ShardTable::FindOrCreateUntouched(Stripe& stripe, Key key,
                                                           uint64_t* read_from_disk) {
  if (auto found = stripe.table.Find(key)) return *found;
  if (store_ != nullptr) {
    std::vector<float> row(row_floats_);
    uint64_t version = 0;
    HERALD_ASSIGN_OR_RETURN(
        bool on_disk, store_->Get(options_.id.value(), key, row_floats_, row.data(), &version));
    if (on_disk) {
      disk_reads_.fetch_add(1, std::memory_order_relaxed);
      if (read_from_disk != nullptr) ++*read_from_disk;
      return stripe.table.Insert(key, row.data(), version);
    }
  }
  if (options_.max_rows > 0) {
    if (rows_.fetch_add(1, std::memory_order_relaxed) >= options_.max_rows) {
      rows_.fetch_sub(1, std::memory_order_relaxed);
      return absl::ResourceExhaustedError(
          absl::StrCat("table ", options_.id.value(), " is full on this shard: ", options_.max_rows,
                       " rows (max_rows per shard); cannot create key ", key));
    }
    auto created = stripe.table.FindOrCreate(key);
    if (!created.ok()) rows_.fetch_sub(1, std::memory_order_relaxed);
    return created;
  }
  auto created = stripe.table.FindOrCreate(key);
  if (created.ok()) rows_.fetch_add(1, std::memory_order_relaxed);
  return created;
}

absl::Status ShardTable::Read(Stripe& stripe, Key key, float* row, uint64_t* version) {
  if (auto found = stripe.table.Find(key)) {
    std::memcpy(row, stripe.table.Row(*found), row_floats_ * sizeof(float));
    *version = stripe.table.version(*found);
    return absl::OkStatus();
  }
  if (store_ != nullptr) {
    HERALD_ASSIGN_OR_RETURN(bool on_disk,
                            store_->Get(options_.id.value(), key, row_floats_, row, version));
    if (on_disk) return absl::OkStatus();
  }
  stripe.table.InitialRow(key, row);
  *version = 0;
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> ShardTable::Erase(Stripe& stripe, const std::vector<Key>& keys) {
  uint64_t held = 0;
  std::vector<float> row(store_ != nullptr ? row_floats_ : 0);
  for (Key key : keys) {
    bool found = false;
    if (auto index = stripe.table.Find(key)) {
      stripe.table.Erase(*index);
      found = true;
    }
    if (!found && store_ != nullptr) {
      uint64_t version = 0;
      HERALD_ASSIGN_OR_RETURN(
          found, store_->Get(options_.id.value(), key, row_floats_, row.data(), &version));
    }
    held += found;
  }
  // A row in memory may have an older copy on disk: every key goes.
  if (store_ != nullptr) HERALD_RETURN_IF_ERROR(store_->Delete(options_.id.value(), keys));
  rows_.fetch_sub(held, std::memory_order_relaxed);
  return held;
}

uint64_t ShardTable::ResidentRows() {
  uint64_t rows = 0;
  for (auto& s : stripes_) {
    absl::MutexLock lock(&s->mu);
    rows += s->table.size();
  }
  return rows;
}

uint64_t ShardTable::MemoryBytes() {
  uint64_t bytes = 0;
  for (auto& s : stripes_) {
    absl::MutexLock lock(&s->mu);
    bytes += s->table.MemoryBytes();
  }
  return bytes;
}

StripeGroups GroupByStripe(const ShardTable& table, const Key* keys, size_t n) {
  const uint32_t stripes = table.num_stripes();
  StripeGroups g;
  g.begin.assign(stripes + 1, 0);
  std::vector<uint32_t> stripe_of(n);
  for (size_t i = 0; i < n; ++i) {
    stripe_of[i] = table.StripeOf(keys[i]);
    ++g.begin[stripe_of[i] + 1];
  }
  for (uint32_t s = 0; s < stripes; ++s) g.begin[s + 1] += g.begin[s];
  std::vector<uint32_t> next(g.begin.begin(), g.begin.end() - 1);
  g.order.resize(n);
  for (size_t i = 0; i < n; ++i) g.order[next[stripe_of[i]]++] = static_cast<uint32_t>(i);
  return g;
}

}  // namespace herald::ps
