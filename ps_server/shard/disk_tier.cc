#include "ps_server/shard/disk_tier.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/thread_name.h"

namespace herald::ps {
namespace {

// Restored rows written to disk per batch.
constexpr size_t kRestoreBatchRows = 4096;
// Keys the look-ahead reads from disk under one hold of the rows lock.
constexpr uint32_t kLoadChunkKeys = 64;

}  // namespace

absl::StatusOr<std::unique_ptr<DiskTier>> DiskTier::Open(const DiskTierOptions& options) {
  if (options.memory_budget == 0) {
    return absl::InvalidArgumentError("disk tier: the memory budget must be positive");
  }
  if (options.path.empty()) return absl::InvalidArgumentError("disk tier: no store path");
  HERALD_ASSIGN_OR_RETURN(
      std::unique_ptr<RowStore> store,
      RowStore::Open(options.path, options.owner, options.cache_bytes, options.memtable_bytes));
  return std::unique_ptr<DiskTier>(new DiskTier(options, std::move(store)));
}

DiskTier::DiskTier(DiskTierOptions options, std::unique_ptr<RowStore> store)
    : options_(std::move(options)), store_(std::move(store)) {}

DiskTier::~DiskTier() {
  {
    absl::MutexLock lock(&queue_mu_);
    stopping_ = true;
  }
  if (loader_.joinable()) loader_.join();
  const std::string path = store_->path();
  store_.reset();
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) HLOG_WARN("row store {}: not removed: {}", path, ec.message());
}

void DiskTier::StartLoader(std::vector<ShardTable*> tables, absl::Mutex* rows_mu) {
  tables_ = std::move(tables);
  rows_mu_ = rows_mu;
  loader_ = std::thread([this] {
    NameThisThread("disk-loader");
    LoaderLoop();
  });
}

void DiskTier::LookAhead(uint64_t iteration, std::vector<LookAheadKeys> keys) {
  bool dropped = false;
  {
    absl::MutexLock lock(&queue_mu_);
    if (queue_.size() >= options_.max_queued || iteration < next_commit_.load()) {
      dropped = true;
    } else {
      queue_.emplace_back(iteration, std::move(keys));
    }
  }
  absl::MutexLock lock(&counters_mu_);
  ++counters_.look_ahead_requests;
  counters_.look_ahead_dropped += dropped;
}

void DiskTier::LoaderLoop() {
  for (;;) {
    std::pair<uint64_t, std::vector<LookAheadKeys>> item;
    {
      absl::MutexLock lock(&queue_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
        return stopping_ ||
               (!queue_.empty() && queue_.front().first <= next_commit_.load() + options_.lead);
      };
      queue_mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    if (item.first < next_commit_.load()) {  // too late: its iteration committed
      absl::MutexLock lock(&counters_mu_);
      ++counters_.look_ahead_dropped;
      continue;
    }
    for (const LookAheadKeys& block : item.second) Load(item.first, block);
  }
}

void DiskTier::Load(uint64_t iteration, const LookAheadKeys& block) {
  ShardTable& table = *tables_[block.table];
  const uint32_t use = UseStamp(iteration);
  const uint32_t rf = table.row_floats();
  const StripeGroups g = GroupByStripe(table, block.keys.data(), block.keys.size());
  uint64_t loaded = 0;
  std::vector<Key> missing;
  std::vector<float> row(rf);
  for (uint32_t s = 0; s < table.num_stripes(); ++s) {
    ShardTable::Stripe& stripe = table.stripe(s);
    for (uint32_t chunk = g.begin[s]; chunk < g.begin[s + 1]; chunk += kLoadChunkKeys) {
      const uint32_t chunk_end = std::min(chunk + kLoadChunkKeys, g.begin[s + 1]);
      // The rows lock held shared for one chunk: no eviction (the only
      // writer of the store while serving) can overtake what is read from
      // disk before it is installed; a commit waits for one chunk at most.
      absl::ReaderMutexLock rows_lock(rows_mu_);
      missing.clear();
      {  // Mark the rows in memory used by `iteration`; list the others.
        absl::MutexLock lock(&stripe.mu);
        for (uint32_t j = chunk; j < chunk_end; ++j) {
          const Key key = block.keys[g.order[j]];
          if (auto index = stripe.table.Find(key)) {
            stripe.table.Touch(*index, use);
          } else {
            missing.push_back(key);
          }
        }
      }
      // Read them without the stripe's lock (requests go on); rows never
      // trained are on neither side (created when first touched).
      for (Key key : missing) {
        uint64_t version = 0;
        absl::StatusOr<bool> found = store_->Get(block.table, key, rf, row.data(), &version);
        if (!found.ok()) {  // the request that needs the row reads it and fails
          HLOG_WARN("look-ahead: {}", std::string(found.status().message()));
          return;
        }
        if (!*found) continue;
        absl::MutexLock lock(&stripe.mu);
        std::optional<uint32_t> index = stripe.table.Find(key);
        if (!index) {  // else a request loaded it meanwhile
          absl::StatusOr<uint32_t> inserted = stripe.table.Insert(key, row.data(), version);
          if (!inserted.ok()) return;
          index = *inserted;
          ++loaded;
        }
        stripe.table.Touch(*index, use);
      }
    }
  }
  by_iteration_[iteration % kIterationSlots].ahead += loaded;
  absl::MutexLock lock(&counters_mu_);
  counters_.rows_loaded_ahead += loaded;
}

absl::Status DiskTier::EvictOverBudget(const std::vector<std::unique_ptr<ShardTable>>& tables,
                                       uint64_t committed, ThreadPool* pool) {
  {
    absl::MutexLock lock(&queue_mu_);  // wakes the loader
    next_commit_.store(committed + 1);
  }
  struct Item {
    ShardTable* table;
    uint32_t stripe;
    uint64_t row_bytes;
  };
  std::vector<Item> items;
  uint64_t resident = 0;
  for (const auto& table : tables) {
    for (uint32_t s = 0; s < table->num_stripes(); ++s) {
      ShardTable::Stripe& stripe = table->stripe(s);
      absl::MutexLock lock(&stripe.mu);
      const uint64_t row_bytes = stripe.table.BytesPerRow();
      resident += stripe.table.size() * row_bytes;
      if (stripe.table.size() > 0) items.push_back({table.get(), s, row_bytes});
    }
  }
  if (resident <= options_.memory_budget) return absl::OkStatus();
  const absl::Time start = absl::Now();
  const uint64_t target = static_cast<uint64_t>(options_.memory_budget * options_.evict_to);
  const uint64_t need = resident - std::min(resident, target);
  const uint32_t last_evictable = UseStamp(committed);
  // Bytes of evictable rows by last use, per item, then merged.
  std::vector<std::map<uint32_t, uint64_t>> by_use(items.size());
  pool->ParallelFor(items.size(), 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      ShardTable::Stripe& stripe = items[i].table->stripe(items[i].stripe);
      absl::MutexLock lock(&stripe.mu);
      absl::flat_hash_map<uint32_t, uint64_t> counts;
      for (uint32_t r = 0; r < stripe.table.slots(); ++r) {
        const uint32_t use = stripe.table.last_use(r);
        if (stripe.table.live(r) && use <= last_evictable) ++counts[use];
      }
      for (const auto& [use, n] : counts) by_use[i][use] = n * items[i].row_bytes;
    }
  });
  std::map<uint32_t, uint64_t> total;
  for (const auto& m : by_use) {
    for (const auto& [use, bytes] : m) total[use] += bytes;
  }
  // Every row last used before `threshold` goes, and rows last used at it
  // until `need` is met (shared out over the items in order).
  uint32_t threshold = 0;
  uint64_t below = 0;
  bool reached = false;
  for (const auto& [use, bytes] : total) {
    threshold = use;
    if (below + bytes >= need) {
      reached = true;
      break;
    }
    below += bytes;
  }
  if (!reached) {
    threshold = last_evictable;
    below = 0;
    for (const auto& [use, bytes] : total) below += use < threshold ? bytes : 0;
    if (!warned_window_) {
      warned_window_ = true;
      HLOG_WARN(
          "row store {}: the rows of the iterations in flight and of the look-ahead take more "
          "than the memory budget of {} bytes; the budget is exceeded until they commit",
          store_->path(), options_.memory_budget);
    }
  }
  std::vector<uint64_t> at_threshold_quota(items.size(), 0);
  uint64_t left = need > below ? need - below : 0;
  for (size_t i = 0; i < items.size(); ++i) {
    auto it = by_use[i].find(threshold);
    const uint64_t here = it == by_use[i].end() ? 0 : it->second;
    at_threshold_quota[i] = std::min(here, left);
    left -= at_threshold_quota[i];
  }
  std::vector<absl::Status> status(items.size());
  std::vector<uint64_t> evicted(items.size(), 0), written(items.size(), 0);
  pool->ParallelFor(items.size(), 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      ShardTable::Stripe& stripe = items[i].table->stripe(items[i].stripe);
      const uint32_t table_id = items[i].table->options().id.value();
      absl::MutexLock lock(&stripe.mu);
      EmbeddingTable& t = stripe.table;
      std::vector<uint32_t> victims;
      std::vector<StoredRow> dirty;
      uint64_t quota = at_threshold_quota[i];
      for (uint32_t r = 0; r < t.slots(); ++r) {
        if (!t.live(r)) continue;
        const uint32_t use = t.last_use(r);
        if (use > threshold) continue;
        if (use == threshold) {
          if (quota == 0) continue;
          quota -= std::min(quota, items[i].row_bytes);
        }
        victims.push_back(r);
        if (t.dirty(r))
          dirty.push_back({table_id, t.key(r), t.version(r), t.Row(r), t.row_floats()});
      }
      if (!dirty.empty()) {
        status[i] = store_->Put(dirty);
        if (!status[i].ok()) continue;
      }
      for (uint32_t r : victims) t.Erase(r);
      evicted[i] = victims.size();
      written[i] = dirty.size();
    }
  });
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  {
    absl::MutexLock lock(&counters_mu_);
    ++counters_.eviction_passes;
    counters_.eviction_ms_total += ms;
    for (size_t i = 0; i < items.size(); ++i) {
      counters_.rows_evicted += evicted[i];
      counters_.rows_written += written[i];
    }
  }
  for (const absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status DiskTier::Restore(ShardTable& table, Key key, uint64_t version, const float* row) {
  ShardTable::Stripe& stripe = table.stripe(table.StripeOf(key));
  absl::MutexLock lock(&stripe.mu);
  const uint64_t row_bytes = stripe.table.BytesPerRow();
  if (restored_bytes_ + row_bytes <= options_.memory_budget * options_.evict_to) {
    HERALD_ASSIGN_OR_RETURN(uint32_t index, table.FindOrCreate(stripe, key, 0));
    std::memcpy(stripe.table.Row(index), row, table.row_floats() * sizeof(float));
    stripe.table.set_version(index, version);
    stripe.table.set_dirty(index, true);
    restored_bytes_ += row_bytes;
    return absl::OkStatus();
  }
  table.CountStoredRow();
  restore_batch_.push_back({table.options().id.value(), key, version,
                            std::vector<float>(row, row + table.row_floats())});
  if (restore_batch_.size() >= kRestoreBatchRows) return FinishRestore();
  return absl::OkStatus();
}

absl::Status DiskTier::FinishRestore() {
  std::vector<StoredRow> rows;
  for (const OwnedRow& r : restore_batch_) {
    rows.push_back({r.table, r.key, r.version, r.row.data(), static_cast<uint32_t>(r.row.size())});
  }
  absl::Status s = rows.empty() ? absl::OkStatus() : store_->Put(rows);
  restore_batch_.clear();
  return s;
}

DiskTierCounters DiskTier::counters() {
  absl::MutexLock lock(&counters_mu_);
  return counters_;
}

}  // namespace herald::ps
