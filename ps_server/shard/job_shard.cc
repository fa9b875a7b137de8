#include "ps_server/shard/job_shard.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checkpoint/manifest.h"
#include "checkpoint/shard_file.h"
#include "checkpoint/sort_by_key.h"
#include "common/logging.h"
#include "common/math/rank_ordered_sum.h"
#include "common/math/sparse_optimizer.h"
#include "common/status.h"

namespace herald::ps {

// How far ahead a batch of lookups prefetches (keys): enough to overlap the
// cache misses of several lookups, few enough to stay in L1.
constexpr uint32_t kLookupsAhead = 8;
namespace {

// Index of the first value that is not finite, or values.size().
size_t FirstNonFinite(absl::Span<const float> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) return i;
  }
  return values.size();
}

absl::Status CommittedWhileWaiting(uint64_t t) {
  return absl::FailedPreconditionError(absl::StrCat("fetch for iteration ", t, ": iteration ", t,
                                                    " committed while the fetch waited"));
}

// Runs fn(item_index) for every item on the pool; returns the error of the
// lowest-numbered failing item (deterministic), or OK.
absl::Status RunItems(ThreadPool* pool, size_t n, const std::function<absl::Status(size_t)>& fn) {
  std::vector<absl::Status> status(n);
  pool->ParallelFor(n, 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) status[i] = fn(i);
  });
  for (auto& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobShard>> JobShard::Create(JobShardOptions options,
                                                           ThreadPool* pool) {
  if (options.job_id.empty()) return absl::InvalidArgumentError("job_id: must not be empty");
  if (options.num_shards == 0 || options.shard >= options.num_shards) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard ", options.shard, " is outside [0, ", options.num_shards, ")"));
  }
  if (options.num_workers == 0 || options.num_workers > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_workers: must be in [1, 65536], got ", options.num_workers));
  }
  if (options.tables.empty()) return absl::InvalidArgumentError("tables: none");
  for (size_t i = 0; i < options.tables.size(); ++i) {
    if (options.tables[i].id.value() != i) {
      return absl::InvalidArgumentError(
          absl::StrCat("tables[", i, "] has id ", options.tables[i].id.value()));
    }
  }
  options.iterations_ahead = std::max<uint32_t>(options.iterations_ahead, 1);
  auto router = KeyRouter::Create(options.num_shards);
  if (!router.ok()) return router.status();
  std::unique_ptr<DiskTier> tier;
  if (options.disk.memory_budget > 0) {
    HERALD_ASSIGN_OR_RETURN(tier, DiskTier::Open(options.disk));
    // Smaller slabs: a stripe's memory grows in steps well inside the budget.
    for (TableOptions& t : options.tables) t.rows_per_slab = 1024;
  }
  return std::unique_ptr<JobShard>(
      new JobShard(std::move(options), pool, *std::move(router), std::move(tier)));
}

JobShard::JobShard(JobShardOptions options, ThreadPool* pool, KeyRouter router,
                   std::unique_ptr<DiskTier> tier)
    : options_(std::move(options)),
      pool_(pool),
      router_(std::move(router)),
      tier_(std::move(tier)),
      clock_(options_.first_iteration) {
  RowStore* store = tier_ == nullptr ? nullptr : &tier_->store();
  std::vector<ShardTable*> tables;
  for (const TableOptions& t : options_.tables) {
    tables_.push_back(std::make_unique<ShardTable>(t, options_.stripes_per_table, store));
    tables.push_back(tables_.back().get());
    for (uint32_t s = 0; s < tables_.back()->num_stripes(); ++s) {
      ShardTable::Stripe& stripe = tables_.back()->stripe(s);
      absl::MutexLock lock(&stripe.mu);
      stripe.committed = options_.first_iteration;
    }
  }
  if (tier_ != nullptr) tier_->StartLoader(std::move(tables), &rows_mu_);
}

JobShard::~JobShard() { tier_.reset(); }

void JobShard::Count(const std::function<void(Counters&)>& fn) {
  absl::MutexLock lock(&stats_mu_);
  fn(counters_);
}

absl::StatusOr<uint32_t> JobShard::RowFloats(uint32_t table) const {
  if (table >= tables_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("table ", table, " does not exist in job ",
                                                   options_.job_id, " (", tables_.size(),
                                                   " tables)"));
  }
  return tables_[table]->row_floats();
}

absl::Status JobShard::CheckKeys(const Block& block, const std::string& where,
                                 std::vector<bool>* seen_tables) const {
  if (block.table >= tables_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": table ", block.table,
                                                   " does not exist in job ", options_.job_id, " (",
                                                   tables_.size(), " tables)"));
  }
  if ((*seen_tables)[block.table]) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": table ", block.table, " appears twice in one request"));
  }
  (*seen_tables)[block.table] = true;
  for (Key key : block.keys) {
    const ShardId owner = router_.ShardOf(TableId(block.table), key);
    if (owner.value() != options_.shard) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": key ", key, " of table ", block.table, " belongs to shard ",
                       owner.value(), ", not shard ", options_.shard));
    }
  }
  return absl::OkStatus();
}

absl::Status JobShard::Reject(absl::Status status) {
  Count([](Counters& c) { ++c.rejected_requests; });
  return status;
}

StripePlan JobShard::PlanByStripe(const std::vector<Block>& blocks) const {
  StripePlan plan;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const ShardTable& table = *tables_[blocks[b].table];
    plan.groups.push_back(GroupByStripe(table, blocks[b].keys.data(), blocks[b].keys.size()));
    for (uint32_t s = 0; s < table.num_stripes(); ++s) {
      if (plan.groups[b].begin[s + 1] > plan.groups[b].begin[s]) plan.items.push_back({b, s});
    }
  }
  return plan;
}

IterationBuffer& JobShard::Buffer(uint64_t iteration) {
  auto& slot = pending_[iteration];
  if (slot == nullptr && spare_ != nullptr) slot = std::move(spare_);
  if (slot == nullptr) {
    slot = std::make_unique<IterationBuffer>(tables_.size(), options_.stripes_per_table,
                                             options_.num_workers);
  }
  return *slot;
}

void JobShard::End(const std::string& why) {
  absl::MutexLock lock(&mu_);
  clock_.End(why);
}

absl::Status JobShard::EndedError(const char* what) {
  return absl::AbortedError(absl::StrCat(what, ": job '", options_.job_id, "' on shard ",
                                         options_.shard, " was ", clock_.ended_reason()));
}

absl::Status JobShard::CheckIterationOpen(uint64_t iteration, uint32_t worker, const char* what) {
  if (clock_.ended()) return EndedError(what);
  if (worker >= options_.num_workers) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": worker_rank ", worker,
                                                   " is outside the job's ", options_.num_workers,
                                                   " workers"));
  }
  const uint64_t open = clock_.open();
  if (iteration < open) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " for iteration ", iteration, ": already committed on shard ",
                     options_.shard, " (next iteration ", open, ")"));
  }
  if (iteration >= open + options_.iterations_ahead) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " for iteration ", iteration, ": too far ahead of iteration ", open,
                     " (at most ", options_.iterations_ahead - 1, " ahead)"));
  }
  auto it = pending_.find(iteration);
  if (it != pending_.end() && it->second->done[worker]) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, " for iteration ", iteration, ": worker ", worker, " already reported it done"));
  }
  return absl::OkStatus();
}

std::string JobShard::MissingWorkers(uint64_t iteration) {
  auto it = pending_.find(iteration);
  std::vector<uint32_t> missing;
  for (uint32_t w = 0; w < options_.num_workers; ++w) {
    if (it == pending_.end() || !it->second->done[w]) missing.push_back(w);
  }
  if (missing.size() > 16) {
    return absl::StrCat(missing.size(), " workers (", missing.front(), ", ", missing[1], ", ...)");
  }
  return absl::StrCat("workers ", absl::StrJoin(missing, ","));
}

bool JobShard::UnchangedBefore(uint64_t t, const std::vector<Block>& blocks) {
  for (auto it = pending_.begin(); it != pending_.end() && it->first < t; ++it) {
    for (const Block& b : blocks) {
      const ShardTable& table = *tables_[b.table];
      for (Key key : b.keys) {
        if (it->second->tables[b.table][table.StripeOf(key)].Changes(key)) return false;
      }
    }
  }
  return true;
}

absl::Status JobShard::Fetch(const FetchIn& request, absl::Time deadline,
                             absl::FunctionRef<RowsOut(size_t block, uint32_t row_floats)> out) {
  std::vector<Block> blocks;
  std::vector<bool> seen(tables_.size(), false);
  for (size_t i = 0; i < request.blocks.size(); ++i) {
    blocks.push_back({request.blocks[i].table, request.blocks[i].keys});
    absl::Status s = CheckKeys(blocks.back(), absl::StrCat("keys[", i, "]"), &seen);
    if (!s.ok()) return Reject(s);
  }
  const uint64_t t = request.iteration;
  // The rows' read lock, taken before mu_ is released so no exclusive
  // commit slips in between; held until the rows are copied.
  std::optional<absl::ReaderMutexLock> rows_read;
  bool early = false;
  bool served_ahead = false;  // early, before t - 1 committed
  {
    absl::MutexLock lock(&mu_);
    if (clock_.ended()) return Reject(EndedError("fetch"));
    const uint64_t committed = clock_.committed();
    if (t < committed) {
      return Reject(absl::FailedPreconditionError(absl::StrCat(
          "fetch for iteration ", t, ": iteration ", t, " is already committed on shard ",
          options_.shard, " (next iteration ", committed, "); its starting rows no longer exist")));
    }
    // Early (distance d): served as soon as t - d - 1 committed, while the
    // later commits (which change none of the keys) may still be under
    // way, checked once against the changes buffered so far; otherwise,
    // and where that check fails, once t - 1's commit began.
    const uint64_t d = request.read_only ? 0 : request.early;
    bool early_tried = false;
    if (EarlyWindow(t, d)) {
      early = UnchangedBefore(t, blocks);
      early_tried = true;
    }
    while (!early) {
      // Every worker reported t - 1: its commit has begun (shared: this
      // fetch then waits per stripe) or finished.
      auto started = [this, t]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return clock_.StartReady(t) || (clock_.open() >= t && !commit_holds_rows_);
      };
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return started() || (!early_tried && EarlyWindow(t, d));
      };
      ++fetches_waiting_;
      const bool woken = mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
      --fetches_waiting_;
      if (clock_.ended()) return Reject(EndedError("fetch"));
      if (!woken) {
        return Reject(absl::DeadlineExceededError(absl::StrCat(
            "fetch for iteration ", t, ": iteration ", t - 1, " was not committed on shard ",
            options_.shard, " before the deadline; not reported: ", MissingWorkers(t - 1))));
      }
      if (clock_.committed() > t) {
        return Reject(CommittedWhileWaiting(t));
      }
      if (started()) break;
      early = UnchangedBefore(t, blocks);
      early_tried = true;
    }
    served_ahead = early && clock_.committed() < t;
    rows_read.emplace(&rows_mu_);
  }

  const StripePlan plan = PlanByStripe(blocks);
  std::vector<RowsOut> outs;
  uint64_t total_keys = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    outs.push_back(out(b, tables_[blocks[b].table]->row_floats()));
    total_keys += blocks[b].keys.size();
  }
  std::vector<uint64_t> read_from_disk(plan.items.size(), 0);  // per item
  // Copies item i's rows if its stripe holds t - 1's commit (an early fetch
  // reads rows t - 1 does not change, at once); else sets deferred[i].
  std::vector<char> deferred(plan.items.size(), 0);  // char: written in parallel
  auto serve = [&](size_t i) -> absl::Status {
    const StripeWork item = plan.items[i];
    const Block& block = blocks[item.block];
    ShardTable& table = *tables_[block.table];
    ShardTable::Stripe& stripe = table.stripe(item.stripe);
    const StripeGroups& g = plan.groups[item.block];
    const size_t row_bytes = table.row_floats() * sizeof(float);
    absl::MutexLock lock(&stripe.mu);
    if (!early && stripe.committed < t) {
      deferred[i] = 1;
      return absl::OkStatus();
    }
    if (!early && stripe.committed > t) return CommittedWhileWaiting(t);
    // Two passes over the stripe's keys: look every key up (its index group
    // prefetched kLookupsAhead keys before, its row prefetched once found),
    // then copy the rows, most of them in cache by then.
    const uint32_t begin = g.begin[item.stripe], end = g.begin[item.stripe + 1];
    if (request.read_only) {  // nothing stored: from memory, disk or the initializer
      std::vector<float> row(table.row_floats());
      for (uint32_t j = begin; j < end; ++j) {
        const uint32_t pos = g.order[j];
        uint64_t v = 0;
        HERALD_RETURN_IF_ERROR(table.Read(stripe, block.keys[pos], row.data(), &v));
        std::memcpy(outs[item.block].rows + pos * row_bytes, row.data(), row_bytes);
        std::memcpy(outs[item.block].versions + pos * sizeof(uint64_t), &v, sizeof(v));
      }
      return absl::OkStatus();
    }
    std::vector<uint32_t> rows(end - begin);
    for (uint32_t j = begin; j < std::min(begin + kLookupsAhead, end); ++j) {
      stripe.table.PrefetchLookup(block.keys[g.order[j]]);
    }
    for (uint32_t j = begin; j < end; ++j) {
      if (j + kLookupsAhead < end) {
        stripe.table.PrefetchLookup(block.keys[g.order[j + kLookupsAhead]]);
      }
      HERALD_ASSIGN_OR_RETURN(rows[j - begin], table.FindOrCreate(stripe, block.keys[g.order[j]],
                                                                  UseStamp(t), &read_from_disk[i]));
      stripe.table.PrefetchRow(rows[j - begin]);
    }
    for (uint32_t j = begin; j < end; ++j) {
      const uint32_t pos = g.order[j];
      const uint32_t row = rows[j - begin];
      std::memcpy(outs[item.block].rows + pos * row_bytes, stripe.table.Row(row), row_bytes);
      const uint64_t v = stripe.table.version(row);
      std::memcpy(outs[item.block].versions + pos * sizeof(uint64_t), &v, sizeof(v));
    }
    return absl::OkStatus();
  };
  absl::Status status = RunItems(pool_, plan.items.size(), serve);
  // The stripes t - 1's commit had not written yet: waited for here, on the
  // caller (pool threads never wait on a commit that needs them), then
  // copied.
  std::vector<size_t> later;
  for (size_t i = 0; i < deferred.size(); ++i) {
    if (deferred[i]) later.push_back(i);
  }
  if (status.ok() && !later.empty()) {
    for (size_t i : later) {
      ShardTable::Stripe& stripe =
          tables_[blocks[plan.items[i].block].table]->stripe(plan.items[i].stripe);
      auto reached = [&stripe, t]()
                         ABSL_NO_THREAD_SAFETY_ANALYSIS { return stripe.committed >= t; };
      stripe.mu.LockWhen(absl::Condition(&reached));
      stripe.mu.Unlock();
      deferred[i] = 0;
    }
    status = RunItems(pool_, later.size(), [&](size_t j) { return serve(later[j]); });
  }
  rows_read.reset();
  if (tier_ != nullptr) {
    uint64_t n = 0;
    for (uint64_t r : read_from_disk) n += r;
    tier_->CountCritical(t, n);
  }
  if (!status.ok()) return Reject(status);
  Count([&](Counters& c) {
    if (request.read_only) {  // evaluation: not the training's traffic
      ++c.read_only_requests;
      c.rows_read_only += total_keys;
    } else {
      ++c.fetch_requests;
      c.rows_fetched += total_keys;
      if (request.early != 0) ++c.early_requests;
      if (served_ahead) ++c.early_served_ahead;
    }
  });
  return absl::OkStatus();
}

absl::Status JobShard::BufferRequest(
    uint64_t t, uint32_t worker, const char* what, const std::vector<Block>& blocks,
    absl::FunctionRef<absl::Status(const KeyAt&, bool, const PendingStripe&, ShardTable::Stripe&)>
        check,
    absl::FunctionRef<void(const KeyAt&, PendingStripe&)> store) {
  absl::MutexLock lock(&mu_);
  absl::Status s = CheckIterationOpen(t, worker, what);
  if (!s.ok()) return Reject(s);
  IterationBuffer& buffer = Buffer(t);
  const StripePlan plan = PlanByStripe(blocks);
  // Row index of every key, found (or created) in phase 1.
  std::vector<std::vector<uint32_t>> row_of(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) row_of[b].resize(blocks[b].keys.size());
  const absl::ReaderMutexLock rows_read(&rows_mu_);  // under mu_: no exclusive commit meanwhile
  std::vector<uint64_t> read_from_disk(plan.items.size(), 0);  // per item
  // Phase 1: check everything and make sure every row exists (row cap), so
  // that phase 2 and the commit cannot fail.
  s = RunItems(pool_, plan.items.size(), [&](size_t i) -> absl::Status {
    const StripeWork item = plan.items[i];
    const Block& block = blocks[item.block];
    ShardTable& table = *tables_[block.table];
    ShardTable::Stripe& stripe = table.stripe(item.stripe);
    const PendingStripe& pending = buffer.tables[block.table][item.stripe];
    const StripeGroups& g = plan.groups[item.block];
    const uint32_t begin = g.begin[item.stripe], end = g.begin[item.stripe + 1];
    absl::flat_hash_set<Key> in_request;
    in_request.reserve(end - begin);
    absl::MutexLock stripe_lock(&stripe.mu);
    // Lookups prefetched kLookupsAhead keys ahead, as in Fetch.
    for (uint32_t j = begin; j < std::min(begin + kLookupsAhead, end); ++j) {
      stripe.table.PrefetchLookup(block.keys[g.order[j]]);
    }
    for (uint32_t j = begin; j < end; ++j) {
      if (j + kLookupsAhead < end) {
        stripe.table.PrefetchLookup(block.keys[g.order[j + kLookupsAhead]]);
      }
      const uint32_t pos = g.order[j];
      const Key key = block.keys[pos];
      const bool repeated = !in_request.insert(key).second;
      auto row = table.FindOrCreate(stripe, key, UseStamp(t), &read_from_disk[i]);
      if (!row.ok()) return row.status();
      row_of[item.block][pos] = *row;
      HERALD_RETURN_IF_ERROR(check({item.block, pos, key, *row}, repeated, pending, stripe));
    }
    return absl::OkStatus();
  });
  if (tier_ != nullptr) {
    uint64_t n = 0;
    for (uint64_t r : read_from_disk) n += r;
    tier_->CountCritical(t, n);
  }
  if (s.ok()) {
    // Phase 2: buffer.
    RunItems(pool_, plan.items.size(), [&](size_t i) -> absl::Status {
      const StripeWork item = plan.items[i];
      const Block& block = blocks[item.block];
      PendingStripe& pending = buffer.tables[block.table][item.stripe];
      const StripeGroups& g = plan.groups[item.block];
      for (uint32_t j = g.begin[item.stripe]; j < g.begin[item.stripe + 1]; ++j) {
        const uint32_t pos = g.order[j];
        store({item.block, pos, block.keys[pos], row_of[item.block][pos]}, pending);
      }
      return absl::OkStatus();
    }).IgnoreError();
  }
  return s.ok() ? s : Reject(s);
}

absl::Status JobShard::PushGradients(const PushIn& request) {
  std::vector<Block> blocks;
  std::vector<bool> seen(tables_.size(), false);
  uint64_t total_keys = 0;
  for (size_t i = 0; i < request.blocks.size(); ++i) {
    const GradientsIn& g = request.blocks[i];
    const std::string where = absl::StrCat("grads[", i, "]");
    blocks.push_back({g.table, g.keys});
    absl::Status s = CheckKeys(blocks.back(), where, &seen);
    if (!s.ok()) return Reject(s);
    const uint32_t dim = tables_[g.table]->dim();
    if (g.dim != dim) {
      return Reject(absl::InvalidArgumentError(absl::StrCat(
          where, ": dim ", g.dim, " does not match table ", g.table, " (dim ", dim, ")")));
    }
    const size_t expect = g.keys.size() * dim;
    if (g.grads.size() != expect) {
      return Reject(absl::InvalidArgumentError(
          absl::StrCat(where, ": grads are ", g.grads.size() * sizeof(float), " bytes, expected ",
                       expect * sizeof(float), " (", g.keys.size(), " keys x dim ", dim, " x 4)")));
    }
    if (const size_t bad = FirstNonFinite(g.grads); bad < g.grads.size()) {
      return Reject(absl::InvalidArgumentError(
          absl::StrCat(where, ": gradient of key ", g.keys[bad / dim], " is not finite")));
    }
    total_keys += g.keys.size();
  }
  const uint64_t t = request.iteration;
  const uint32_t worker = request.worker;
  auto check = [&](const KeyAt& k, bool repeated, const PendingStripe& pending,
                   ShardTable::Stripe&) -> absl::Status {
    bool duplicate = repeated;
    if (auto it = pending.grad_index.find(k.key); it != pending.grad_index.end()) {
      for (const Contribution& c : pending.grads[it->second].contributions) {
        duplicate |= c.worker == worker;
      }
    }
    if (!duplicate) return absl::OkStatus();
    return absl::AlreadyExistsError(absl::StrCat("grads[", k.block, "]: worker ", worker,
                                                 " already pushed key ", k.key, " of table ",
                                                 blocks[k.block].table, " for iteration ", t));
  };
  auto store = [&](const KeyAt& k, PendingStripe& pending) {
    const uint32_t dim = request.blocks[k.block].dim;
    auto [it, inserted] = pending.grad_index.try_emplace(k.key, pending.grads.size());
    if (inserted) pending.grads.emplace_back().row = k.row;
    const uint32_t slot = static_cast<uint32_t>(pending.grad_arena.size() / dim);
    pending.grads[it->second].contributions.push_back({worker, slot});
    const float* grad = request.blocks[k.block].grads.data() + size_t{k.pos} * dim;
    pending.grad_arena.insert(pending.grad_arena.end(), grad, grad + dim);
  };
  HERALD_RETURN_IF_ERROR(BufferRequest(t, worker, "push", blocks, check, store));
  Count([&](Counters& c) {
    ++c.push_requests;
    c.gradients_pushed += total_keys;
  });
  return absl::OkStatus();
}

absl::Status JobShard::WriteBack(const WriteBackIn& request) {
  std::vector<Block> blocks;
  std::vector<bool> seen(tables_.size(), false);
  uint64_t total_keys = 0;
  for (size_t i = 0; i < request.blocks.size(); ++i) {
    const RowsIn& r = request.blocks[i];
    const std::string where = absl::StrCat("rows[", i, "]");
    blocks.push_back({r.table, r.keys});
    absl::Status s = CheckKeys(blocks.back(), where, &seen);
    if (!s.ok()) return Reject(s);
    const uint32_t rf = tables_[r.table]->row_floats();
    const size_t n = r.keys.size();
    if (r.row_floats != rf) {
      return Reject(absl::InvalidArgumentError(
          absl::StrCat(where, ": row_floats ", r.row_floats, " does not match table ", r.table,
                       " (", rf, " floats: values + optimizer state)")));
    }
    if (r.rows.size() != n * rf || r.versions.size() != n) {
      return Reject(absl::InvalidArgumentError(absl::StrCat(
          where, ": ", n, " keys need ", n * rf * sizeof(float), " bytes of rows and ",
          n * sizeof(uint64_t), " bytes of versions, got ", r.rows.size() * sizeof(float), " and ",
          r.versions.size() * sizeof(uint64_t))));
    }
    if (const size_t bad = FirstNonFinite(r.rows); bad < r.rows.size()) {
      return Reject(absl::InvalidArgumentError(
          absl::StrCat(where, ": row of key ", r.keys[bad / rf], " is not finite")));
    }
    total_keys += n;
  }
  const uint64_t t = request.iteration;
  auto check = [&](const KeyAt& k, bool repeated, const PendingStripe& pending,
                   ShardTable::Stripe& stripe) ABSL_EXCLUSIVE_LOCKS_REQUIRED(stripe.mu) {
    const uint32_t table = blocks[k.block].table;
    if (repeated || pending.write_backs.contains(k.key)) {
      return absl::AlreadyExistsError(absl::StrCat("rows[", k.block, "]: key ", k.key, " of table ",
                                                   table,
                                                   " was already written back for iteration ", t));
    }
    const uint64_t stored = stripe.table.version(k.row);
    const uint64_t v = request.blocks[k.block].versions[k.pos];
    if (v < stored) {
      return absl::FailedPreconditionError(
          absl::StrCat("rows[", k.block, "]: stale write-back of key ", k.key, " of table ", table,
                       ": version ", v, " is older than the stored version ", stored));
    }
    return absl::OkStatus();
  };
  auto store = [&](const KeyAt& k, PendingStripe& pending) {
    const RowsIn& r = request.blocks[k.block];
    const uint32_t slot = static_cast<uint32_t>(pending.write_back_arena.size() / r.row_floats);
    const float* row = r.rows.data() + size_t{k.pos} * r.row_floats;
    pending.write_back_arena.insert(pending.write_back_arena.end(), row, row + r.row_floats);
    pending.write_backs.emplace(k.key, PendingWriteBack{k.row, r.versions[k.pos], slot});
  };
  HERALD_RETURN_IF_ERROR(BufferRequest(t, request.worker, "write-back", blocks, check, store));
  Count([&](Counters& c) {
    ++c.write_back_requests;
    c.rows_written_back += total_keys;
  });
  return absl::OkStatus();
}

absl::StatusOr<bool> JobShard::IterationDone(Iteration iteration, WorkerRank rank,
                                             uint32_t num_workers, DiskReads* committed_reads,
                                             absl::Span<const KeysIn> expire) {
  const uint64_t t = iteration.value();
  const uint32_t worker = rank.value();
  std::vector<bool> seen(tables_.size(), false);
  for (size_t i = 0; i < expire.size(); ++i) {
    absl::Status s = CheckKeys({expire[i].table, expire[i].keys},
                               absl::StrCat("iteration done: expire[", i, "]"), &seen);
    if (!s.ok()) return Reject(s);
  }
  absl::MutexLock lock(&mu_);
  absl::Status s;
  if (num_workers != options_.num_workers) {
    s = absl::InvalidArgumentError(absl::StrCat("iteration done: num_workers ", num_workers,
                                                " does not match the job's ",
                                                options_.num_workers));
  } else if (auto it = pending_.find(t);
             it != pending_.end() && worker < options_.num_workers && it->second->done[worker]) {
    s = absl::AlreadyExistsError(
        absl::StrCat("iteration done: worker ", worker, " already reported iteration ", t));
  } else {
    s = CheckIterationOpen(t, worker, "iteration done");
  }
  if (!s.ok()) return Reject(s);
  IterationBuffer& buffer = Buffer(t);
  for (const KeysIn& block : expire) {
    ShardTable& table = *tables_[block.table];
    for (Key key : block.keys)
      buffer.tables[block.table][table.StripeOf(key)].expire.push_back(key);
    buffer.has_expiries |= !block.keys.empty();
  }
  buffer.done[worker] = true;
  ++buffer.done_count;
  CommitReadyIterations(committed_reads);
  return clock_.committed() > t;
}

void JobShard::CommitReadyIterations(DiskReads* reads) {
  // One committing thread at a time (a commit that holds the rows shared
  // would not keep the next one out): it commits every iteration that is
  // ready once its own is done, in order.
  if (committing_) return;
  committing_ = true;
  while (true) {
    auto it = pending_.find(clock_.open());
    if (it == pending_.end() || !it->second->complete()) {
      committing_ = false;
      return;
    }
    std::unique_ptr<IterationBuffer> buffer = std::move(it->second);
    pending_.erase(it);
    const uint64_t t = clock_.BeginCommit();
    const absl::Time start = absl::Now();
    double ms = 0;
    absl::Status evicted;
    {
      // Moving rows to disk or deleting them changes row indices that
      // requests hold: only then are all requests kept out.
      commit_holds_rows_ = tier_ != nullptr || buffer->has_expiries;
      CommitWindow window(
          &mu_, &rows_mu_,
          commit_holds_rows_ ? CommitWindow::Rows::kExclusive : CommitWindow::Rows::kShared);
      evicted = Apply(*buffer, t);
      // No request holds a row index now: rows may move to disk.
      if (tier_ != nullptr && evicted.ok()) evicted = tier_->EvictOverBudget(tables_, t, pool_);
      window.ReleaseRows();
      ms = absl::ToDoubleMilliseconds(absl::Now() - start);
      buffer->Reset();  // outside mu_: this thread owns it
    }
    if (!evicted.ok()) {
      // The commit stands (the rows stay in memory); the job cannot go on
      // within its budget, and says why.
      HLOG_ERROR("job {}: shard {}: {}", options_.job_id, options_.shard,
                 std::string(evicted.message()));
      clock_.End(
          absl::StrCat("ended: its disk tier failed after iteration ", t, ": ", evicted.message()));
    }
    if (spare_ == nullptr) spare_ = std::move(buffer);
    if (tier_ != nullptr) {
      const DiskReads of_t = tier_->TakeIteration(t);
      if (reads != nullptr) *reads += of_t;
    }
    commit_holds_rows_ = false;
    clock_.FinishCommit(t);
    Count([ms](Counters& c) {
      ++c.iterations_committed;
      c.commit_ms_total += ms;
      c.commit_ms_max = std::max(c.commit_ms_max, ms);
    });
  }
}

absl::Status JobShard::Apply(IterationBuffer& buffer, uint64_t t) {
  std::vector<std::pair<uint32_t, uint32_t>> items;  // (table, stripe)
  for (uint32_t i = 0; i < tables_.size(); ++i) {
    for (uint32_t s = 0; s < tables_[i]->num_stripes(); ++s) {
      const PendingStripe& p = buffer.tables[i][s];
      if (!p.grads.empty() || !p.write_backs.empty() || !p.expire.empty()) {
        items.emplace_back(i, s);
      } else {  // nothing to write: committed at once
        ShardTable::Stripe& stripe = tables_[i]->stripe(s);
        absl::MutexLock lock(&stripe.mu);
        stripe.committed = t + 1;
      }
    }
  }
  absl::Mutex failed_mu;
  absl::Status failed;
  std::atomic<uint64_t> expired{0};
  pool_->ParallelFor(items.size(), 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      ShardTable& table = *tables_[items[i].first];
      ShardTable::Stripe& stripe = table.stripe(items[i].second);
      PendingStripe& pending = buffer.tables[items[i].first][items[i].second];
      const uint32_t dim = table.dim();
      const uint32_t rf = table.row_floats();
      const math::SparseOptimizerConfig opt = math::AtIteration(table.options().optimizer, t);
      if (options_.before_stripe_commit) {
        options_.before_stripe_commit(items[i].first, items[i].second);
      }
      absl::MutexLock lock(&stripe.mu);
      // Write-backs first: the owner's row as it was before this
      // iteration's aggregated gradients.
      for (const auto& [key, wb] : pending.write_backs) {
        std::memcpy(stripe.table.Row(wb.row),
                    pending.write_back_arena.data() + static_cast<size_t>(wb.data) * rf,
                    rf * sizeof(float));
        stripe.table.set_version(wb.row, wb.version);
        stripe.table.set_dirty(wb.row, true);
      }
      std::vector<float> sum(dim);
      for (PendingGrad& g : pending.grads) {
        math::RankOrderedSum(
            g.contributions, dim, [](const Contribution& c) { return c.worker; },
            [&](const Contribution& c) { return pending.grad_arena.data() + size_t{c.grad} * dim; },
            sum.data());
        float* row = stripe.table.Row(g.row);
        math::ApplySparseUpdate(opt, dim, sum.data(), row, row + dim);
        stripe.table.set_version(g.row, stripe.table.version(g.row) + 1);
        stripe.table.set_dirty(g.row, true);
      }
      // Expired rows last: nothing of this iteration writes them.
      if (!pending.expire.empty()) {
        absl::StatusOr<uint64_t> held = table.Erase(stripe, pending.expire);
        if (held.ok()) {
          expired.fetch_add(*held, std::memory_order_relaxed);
        } else {
          absl::MutexLock failed_lock(&failed_mu);
          if (failed.ok()) failed = held.status();
        }
      }
      stripe.committed = t + 1;  // fetches for t + 1 waiting on it go on
    }
  });
  if (const uint64_t n = expired.load(); n > 0) Count([n](Counters& c) { c.rows_expired += n; });
  return failed;
}

absl::StatusOr<checkpoint::ShardFileInfo> JobShard::Checkpoint(const std::string& checkpoint_dir,
                                                               uint64_t t, absl::Time deadline,
                                                               const CheckpointProgress& progress) {
  if (checkpoint_dir.empty()) return absl::InvalidArgumentError("checkpoint: dir is empty");
  // As in Fetch, the rows' lock is taken before mu_ is released; held
  // exclusively, since a commit that holds it shared writes stripes.
  std::optional<absl::WriterMutexLock> rows_held;
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this, t]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return clock_.SettledAt(t); };
    const bool woken = mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
    if (clock_.ended()) return EndedError("checkpoint");
    if (!woken) {
      return absl::DeadlineExceededError(absl::StrCat("checkpoint of iteration ", t,
                                                      ": not committed before the deadline; not "
                                                      "reported: ",
                                                      MissingWorkers(t)));
    }
    if (clock_.committed() != t + 1) {
      return absl::FailedPreconditionError(
          absl::StrCat("checkpoint of iteration ", t, ": shard ", options_.shard,
                       " has already committed iteration ", clock_.committed() - 1,
                       "; a checkpoint captures the latest committed iteration"));
    }
    rows_held.emplace(&rows_mu_);
  }
  const absl::Time write_start = absl::Now();
  absl::StatusOr<checkpoint::ShardFileInfo> info =
      [&]() -> absl::StatusOr<checkpoint::ShardFileInfo> {
    const std::string dir = checkpoint::CheckpointIterationDir(checkpoint_dir, options_.job_id, t);
    HERALD_RETURN_IF_ERROR(checkpoint::MakeDirs(dir));
    checkpoint::ShardFileHeader header{options_.job_id, options_.shard, options_.num_shards, t,
                                       static_cast<uint32_t>(tables_.size())};
    HERALD_ASSIGN_OR_RETURN(
        auto writer,
        checkpoint::ShardFileWriter::Create(
            dir + "/" + checkpoint::ShardFileName(options_.shard, options_.num_shards), header));
    uint64_t total = 0, written = 0;
    for (auto& table : tables_) total += table->rows();
    auto report = [&] {
      if (progress) progress(written, total);
    };
    for (auto& table : tables_) {
      struct Entry {
        Key key;
        uint32_t stripe, row;
      };
      // Every stripe of the table locked once, in stripe order, while it is
      // written (nothing else trains meanwhile: the job waits for the
      // checkpoint), instead of one lock per row.
      std::vector<std::unique_ptr<absl::MutexLock>> locks;
      for (uint32_t s = 0; s < table->num_stripes(); ++s) {
        locks.push_back(std::make_unique<absl::MutexLock>(&table->stripe(s).mu));
      }
      std::vector<Entry> entries;
      entries.reserve(table->rows());
      for (uint32_t s = 0; s < table->num_stripes(); ++s) {
        const ShardTable::Stripe& stripe = table->stripe(s);
        stripe.mu.AssertHeld();  // by `locks`
        const EmbeddingTable& rows = stripe.table;
        for (uint32_t r = 0; r < rows.slots(); ++r) {
          if (rows.live(r)) entries.push_back({rows.key(r), s, r});
        }
      }
      checkpoint::SortByKey(&entries);
      const TableOptions& o = table->options();
      const uint64_t count = table->rows();  // in memory and on disk
      HERALD_RETURN_IF_ERROR(writer->BeginTable({o.id.value(), o.dim, table->row_floats(),
                                                 static_cast<uint32_t>(o.optimizer.kind), count}));
      // The rows in memory merged in key order with those on disk; a row in
      // both is the memory's (the disk's copy is older).
      std::unique_ptr<RowStore::Cursor> disk;
      if (tier_ != nullptr) {
        HERALD_ASSIGN_OR_RETURN(disk, tier_->store().Rows(o.id.value(), table->row_floats()));
      }
      const uint64_t table_start = written;
      auto append = [&](Key key, uint64_t version, const float* row) -> absl::Status {
        if (written > 0 && written % kCheckpointProgressRows == 0) report();
        ++written;
        return writer->AppendRow(key, version, row);
      };
      for (size_t i = 0; i <= entries.size(); ++i) {
        const bool more = i < entries.size();
        while (disk != nullptr && disk->Valid() && (!more || disk->key() <= entries[i].key)) {
          if (!more || disk->key() < entries[i].key) {
            HERALD_RETURN_IF_ERROR(append(disk->key(), disk->version(), disk->row()));
          }
          HERALD_RETURN_IF_ERROR(disk->Next());
        }
        if (!more) break;
        const Entry& e = entries[i];
        const ShardTable::Stripe& stripe = table->stripe(e.stripe);
        stripe.mu.AssertHeld();  // by `locks`
        HERALD_RETURN_IF_ERROR(append(e.key, stripe.table.version(e.row), stripe.table.Row(e.row)));
      }
      if (written - table_start != count) {
        return absl::InternalError(absl::StrCat("checkpoint: table ", o.id.value(), " has ", count,
                                                " rows but ", written - table_start,
                                                " were found in memory and on disk"));
      }
      report();  // the table is written
    }
    return writer->Finish();
  }();
  rows_held.reset();
  if (info.ok()) info->write_ms = absl::ToDoubleMilliseconds(absl::Now() - write_start);
  return info;
}

absl::Status JobShard::RestoreRow(TableId table_id, Key key, uint64_t version, const float* row) {
  if (table_id.value() >= tables_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("table ", table_id.value(), " does not exist"));
  }
  ShardTable& table = *tables_[table_id.value()];
  if (tier_ != nullptr) return tier_->Restore(table, key, version, row);
  ShardTable::Stripe& stripe = table.stripe(table.StripeOf(key));
  absl::MutexLock lock(&stripe.mu);
  HERALD_ASSIGN_OR_RETURN(uint32_t index, table.FindOrCreate(stripe, key, 0));
  std::memcpy(stripe.table.Row(index), row, table.row_floats() * sizeof(float));
  stripe.table.set_version(index, version);
  return absl::OkStatus();
}

absl::Status JobShard::FinishRestore() {
  return tier_ == nullptr ? absl::OkStatus() : tier_->FinishRestore();
}

absl::Status JobShard::LookAhead(Iteration iteration, const std::vector<LookAheadKeys>& keys) {
  if (tier_ == nullptr) {
    return Reject(absl::FailedPreconditionError(absl::StrCat(
        "look-ahead: job '", options_.job_id, "' has no disk tier on shard ", options_.shard)));
  }
  std::vector<bool> seen(tables_.size(), false);
  for (size_t i = 0; i < keys.size(); ++i) {
    absl::Status s = CheckKeys({keys[i].table, keys[i].keys}, absl::StrCat("keys[", i, "]"), &seen);
    if (!s.ok()) return Reject(s);
  }
  tier_->LookAhead(iteration.value(), keys);
  return absl::OkStatus();
}

uint64_t JobShard::next_iteration() {
  absl::MutexLock lock(&mu_);
  return clock_.committed();
}

void JobShard::Stats(proto::PsStatsResponse* response) {
  uint64_t memory = 0;
  for (auto& table : tables_) {
    proto::TableStats* ts = response->add_tables();
    ts->set_table_id(table->options().id.value());
    ts->set_rows(table->rows());
    ts->set_bytes(table->MemoryBytes());
    ts->set_raw_bytes(table->RawRowBytes());
    memory += ts->bytes();
  }
  response->set_memory_bytes(memory);
  if (tier_ != nullptr) {
    proto::DiskTierStats* d = response->mutable_disk_tier();
    d->set_memory_budget_bytes(tier_->options().memory_budget);
    d->set_path(tier_->store().path());
    d->set_disk_bytes(tier_->store().DiskBytes());
    uint64_t resident = 0, critical = 0;
    for (auto& table : tables_) {
      resident += table->ResidentRows();
      critical += table->disk_reads();
    }
    d->set_resident_rows(resident);
    d->set_rows_read_on_critical_path(critical);
    const DiskTierCounters c = tier_->counters();
    d->set_rows_loaded_ahead(c.rows_loaded_ahead);
    d->set_look_ahead_requests(c.look_ahead_requests);
    d->set_look_ahead_dropped(c.look_ahead_dropped);
    d->set_rows_evicted(c.rows_evicted);
    d->set_rows_written(c.rows_written);
    d->set_eviction_passes(c.eviction_passes);
    d->set_eviction_ms_total(c.eviction_ms_total);
  }
  {
    absl::MutexLock lock(&mu_);
    response->set_next_iteration(clock_.committed());
    response->set_fetches_waiting(fetches_waiting_);
  }
  absl::MutexLock lock(&stats_mu_);
  const Counters& c = counters_;
  response->set_rows_fetched(c.rows_fetched);
  response->set_gradients_pushed(c.gradients_pushed);
  response->set_rows_written_back(c.rows_written_back);
  response->set_iterations_committed(c.iterations_committed);
  response->set_rows_expired(c.rows_expired);
  response->set_fetch_requests(c.fetch_requests);
  response->set_early_requests(c.early_requests);
  response->set_early_served_ahead(c.early_served_ahead);
  response->set_rows_read_only(c.rows_read_only);
  response->set_read_only_requests(c.read_only_requests);
  response->set_push_requests(c.push_requests);
  response->set_write_back_requests(c.write_back_requests);
  response->set_rejected_requests(c.rejected_requests);
  response->set_commit_latency_ms_mean(
      c.iterations_committed ? c.commit_ms_total / c.iterations_committed : 0.0);
  response->set_commit_latency_ms_max(c.commit_ms_max);
}

}  // namespace herald::ps
