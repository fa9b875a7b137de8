#include "ps_server/shard/shard_table.h"

#include "absl/strings/str_cat.h"

namespace herald::ps {

ShardTable::ShardTable(const TableOptions& options, uint32_t num_stripes)
    : options_(options), row_floats_(math::RowFloats(options.optimizer.kind, options.dim)) {
  TableOptions per_stripe = options;
  per_stripe.max_rows = 0;  // enforced here, across stripes
  for (uint32_t i = 0; i < std::max<uint32_t>(num_stripes, 1); ++i) {
    stripes_.push_back(std::make_unique<Stripe>(per_stripe));
  }
}

absl::StatusOr<uint32_t> ShardTable::FindOrCreate(Stripe& stripe, Key key) {
  if (auto found = stripe.table.Find(key)) return *found;
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
