#include "scheduler/jobs/job_cache_sizing.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "common/data/binary_key_stats.h"
#include "common/data/distinct_counter.h"
#include "common/data/hot_keys.h"
#include "common/data/input_stream.h"
#include "common/state_io.h"
#include "common/status.h"
#include "scheduler/data/batch_stream.h"
#include "scheduler/data/data_schema_spec.h"
#include "scheduler/data/key_lifecycle.h"
#include "scheduler/planner/simulator.h"

namespace herald::scheduler {

std::optional<std::vector<uint32_t>> SchemaKeysPerSample(const proto::JobSpec& spec) {
  std::vector<uint32_t> bound(spec.tables_size(), 0);
  // Per feature in schema order: the most ids in one value.
  std::vector<uint32_t> feature_ids;
  if (spec.data().has_schema()) {
    for (const proto::ColumnSpec& c : spec.data().schema().columns()) {
      if (c.role() != proto::COLUMN_SPARSE) continue;
      if (c.multi_hot_separator().empty()) {
        feature_ids.push_back(1);
      } else if (c.max_ids() > 0) {
        feature_ids.push_back(c.max_ids());
      } else {
        return std::nullopt;  // up to kMaxIdsPerValue: read the data instead
      }
    }
  }
  const std::vector<uint32_t> tables = FeatureTablesOf(spec);
  for (size_t f = 0; f < tables.size(); ++f) {
    if (tables[f] < bound.size()) bound[tables[f]] += f < feature_ids.size() ? feature_ids[f] : 1;
  }
  for (uint32_t& b : bound) b = std::max<uint32_t>(b, 1);
  return bound;
}

namespace {

// scheduling.cache_rows_per_worker for every table, and slots for a
// worker's share of the batch at `max_keys` keys a sample.
JobCacheSizing BudgetSizing(uint64_t rows, const std::vector<uint32_t>& max_keys,
                            uint32_t per_worker) {
  JobCacheSizing sizing;
  const uint32_t capacity = static_cast<uint32_t>(std::min<uint64_t>(rows, UINT32_MAX));
  for (uint32_t keys : max_keys) {
    sizing.capacity.push_back(capacity);
    sizing.slots.push_back(std::max(capacity, per_worker * keys));
  }
  return sizing;
}

}  // namespace

std::optional<JobCacheSizing> SizeFromKeyStats(const proto::JobSpec& spec, uint32_t num_workers) {
  const proto::DataSpec& data = spec.data();
  if (data.format() != proto::DATA_FORMAT_HERALD_BINARY || spec.scheduling().warm_start() ||
      (data.eval_fraction() > 0 && !data.follow()) || !KeyLifecycle::RuleOf(spec).empty()) {
    return std::nullopt;
  }
  std::vector<std::string> paths(data.paths().begin(), data.paths().end());
  absl::StatusOr<std::vector<std::string>> files = data::ExpandInputPaths(paths);
  if (!files.ok() || files->empty()) return std::nullopt;  // the pass names the error
  std::optional<data::KeyStats> all;
  const data::DistinctCounter pass_counter;  // as the pass counts
  for (const std::string& file : *files) {
    // Damaged statistics: the pass reads the samples (and says if they are
    // damaged too).
    absl::StatusOr<std::optional<data::KeyStats>> stats = data::ReadBinaryKeyStats(file);
    if (!stats.ok() || !stats->has_value()) return std::nullopt;
    for (const data::FeatureKeyStats& f : (*stats)->features) {
      if (f.distinct.exact_limit() != pass_counter.exact_limit() ||
          f.distinct.precision() != pass_counter.precision()) {
        return std::nullopt;
      }
    }
    if (!all.has_value()) {
      all = data::EmptyKeyStats(static_cast<uint32_t>((*stats)->features.size()));
    } else if (all->features.size() != (*stats)->features.size()) {
      return std::nullopt;  // the reader names the file that does not match
    }
    all->Merge(**stats);
  }
  const uint64_t batch = spec.global_batch_size();
  if (all->samples < batch) return std::nullopt;
  if (spec.iterations() > 0 && !data.follow() && spec.iterations() * batch < all->samples) {
    return std::nullopt;  // the job trains part of the data: the pass counts that part
  }
  const std::vector<uint32_t> table_of = FeatureTablesOf(spec);
  if (table_of.size() != all->features.size()) return std::nullopt;
  const size_t tables = spec.tables_size();
  std::vector<data::DistinctCounter> distinct(tables);
  std::vector<uint32_t> max_keys(tables, 0);
  for (size_t f = 0; f < table_of.size(); ++f) {
    if (table_of[f] >= tables) return std::nullopt;
    distinct[table_of[f]].Merge(all->features[f].distinct);
    max_keys[table_of[f]] += all->features[f].max_ids;
  }
  for (uint32_t& k : max_keys) k = std::max<uint32_t>(k, 1);
  const uint32_t per_worker = static_cast<uint32_t>((batch + num_workers - 1) / num_workers);
  if (spec.scheduling().cache_rows_per_worker() > 0) {
    return BudgetSizing(spec.scheduling().cache_rows_per_worker(), max_keys, per_worker);
  }
  std::vector<uint64_t> counts(tables, 0);
  for (size_t t = 0; t < tables; ++t) counts[t] = distinct[t].Estimate();
  const CacheSizing sizing =
      SizeCaches(counts, max_keys, spec.scheduling().cache_fraction(), per_worker);
  return JobCacheSizing{sizing.capacity, sizing.slots, {}};
}

bool SizingReadsData(const proto::JobSpec& spec) {
  const proto::SchedulingSpec& s = spec.scheduling();
  return s.cache_rows_per_worker() == 0 || s.warm_start() || !SchemaKeysPerSample(spec);
}

absl::StatusOr<JobCacheSizing> SizeJobCaches(const proto::JobSpec& spec, uint32_t num_workers) {
  const uint32_t per_worker = (spec.global_batch_size() + num_workers - 1) / num_workers;
  if (!SizingReadsData(spec)) {  // the most keys a sample can look up, from the schema
    return BudgetSizing(spec.scheduling().cache_rows_per_worker(), *SchemaKeysPerSample(spec),
                        per_worker);
  }
  if (std::optional<JobCacheSizing> stored = SizeFromKeyStats(spec, num_workers)) return *stored;
  // One pass over the batches the job trains (at most one epoch), in its
  // order without shuffling. `visit` sees every batch.
  // Raw samples: the keys are all it reads.
  auto each_batch =
      [&](const std::function<void(const data::SampleBlock&)>& visit) -> absl::Status {
    BatchStreamOptions o = StreamOptionsFromSpec(spec, Split::kTrain);
    o.max_epochs = 1;
    o.data.set_shuffle_buffer(0);
    // A followed directory: the files in it now (later ones may differ).
    o.data.set_follow(false);
    HERALD_ASSIGN_OR_RETURN(auto stream, BatchStream::Open(o));
    const data::SampleBlock* batch = nullptr;
    for (;;) {
      HERALD_ASSIGN_OR_RETURN(bool more, stream->NextSamples(&batch));
      if (!more) break;
      visit(*batch);
    }
    if (stream->batches() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data: fewer training samples than one global batch (", spec.global_batch_size(), ")"));
    }
    return absl::OkStatus();
  };
  // Pass 1: distinct keys per table (exact up to 65536, then a HyperLogLog
  // estimate: memory bounded whatever the data) and the widest multi-hot
  // feature.
  const size_t tables = spec.tables_size();
  // The blocks hold features; several may look up one table.
  const std::vector<uint32_t> table_of = FeatureTablesOf(spec);
  const bool need_distinct = spec.scheduling().cache_rows_per_worker() == 0;
  std::vector<data::DistinctCounter> distinct(need_distinct ? tables : 0);
  std::vector<uint32_t> max_keys(tables, 1);
  std::vector<uint32_t> sample_keys(tables, 0);
  // Each table's keys in sample order, as the batches have them.
  // Samples outer, features inner: the block's keys are read in the order
  // they are stored (sample by sample), once.
  HERALD_RETURN_IF_ERROR(each_batch([&](const data::SampleBlock& batch) {
    for (size_t s = 0; s < batch.size(); ++s) {
      std::fill(sample_keys.begin(), sample_keys.end(), 0);
      for (size_t f = 0; f < table_of.size(); ++f) {
        const uint32_t t = table_of[f];
        const absl::Span<const uint64_t> keys = batch.Keys(s, static_cast<uint32_t>(f));
        sample_keys[t] += static_cast<uint32_t>(keys.size());
        if (need_distinct) {
          for (Key key : keys) distinct[t].Add(key);
        }
      }
      for (size_t t = 0; t < tables; ++t) max_keys[t] = std::max(max_keys[t], sample_keys[t]);
    }
  }));
  std::vector<uint64_t> counts(tables, 0);
  for (size_t t = 0; t < distinct.size(); ++t) counts[t] = distinct[t].Estimate();
  JobCacheSizing result;
  if (need_distinct) {
    const CacheSizing sizing =
        SizeCaches(counts, max_keys, spec.scheduling().cache_fraction(), per_worker);
    result = {sizing.capacity, sizing.slots, {}};
  } else {  // the budget, with the most keys a sample looked up in the data
    result = BudgetSizing(spec.scheduling().cache_rows_per_worker(), max_keys, per_worker);
  }
  if (!spec.scheduling().warm_start()) return result;
  // Pass 2, warm start only: each table's `capacity` hottest keys, from
  // counters for max(2 × capacity, 16384) keys (exact while the table's
  // distinct keys fit; memory follows the caches' size, not the data's).
  std::vector<data::HotKeys> hot;
  for (size_t t = 0; t < tables; ++t) {
    hot.emplace_back(std::max<size_t>(2 * size_t{result.capacity[t]}, 16384));
  }
  HERALD_RETURN_IF_ERROR(each_batch([&](const data::SampleBlock& batch) {
    for (size_t s = 0; s < batch.size(); ++s) {
      for (size_t f = 0; f < table_of.size(); ++f) {
        for (Key key : batch.Keys(s, static_cast<uint32_t>(f))) hot[table_of[f]].Add(key);
      }
    }
  }));
  for (size_t t = 0; t < tables; ++t) result.warm_keys.push_back(hot[t].Top(result.capacity[t]));
  return result;
}

namespace {

constexpr uint64_t kSizingMagic = 0x455a'4953'444c'5248ULL;  // "HRLDSIZE"
constexpr uint32_t kSizingVersion = 1;

}  // namespace

std::string SaveCacheSizing(const JobCacheSizing& sizing) {
  StateWriter out;
  out.Pod(kSizingMagic);
  out.Pod(kSizingVersion);
  out.Vec(sizing.capacity);
  out.Vec(sizing.slots);
  out.Vecs(sizing.warm_keys);
  return out.Take();
}

absl::StatusOr<JobCacheSizing> LoadCacheSizing(std::string_view bytes, size_t tables) {
  StateReader in(bytes, "cache sizing");
  uint64_t magic = 0;
  uint32_t version = 0;
  JobCacheSizing sizing;
  if (in.Pod("magic", &magic) && magic != kSizingMagic) in.Invalid("magic", "not a cache sizing");
  if (in.Pod("version", &version) && version != kSizingVersion) {
    in.Invalid("version", absl::StrCat(version, ", this scheduler reads ", kSizingVersion));
  }
  if (in.Vec("capacity", &sizing.capacity) && sizing.capacity.size() != tables) {
    in.Invalid("capacity", absl::StrCat(sizing.capacity.size(), " tables, the job has ", tables));
  }
  if (in.Vec("slots", &sizing.slots) && sizing.slots.size() != tables) {
    in.Invalid("slots", absl::StrCat(sizing.slots.size(), " tables, the job has ", tables));
  }
  if (in.Vecs("warm_keys", &sizing.warm_keys) && !sizing.warm_keys.empty() &&
      sizing.warm_keys.size() != tables) {
    in.Invalid("warm_keys", absl::StrCat(sizing.warm_keys.size(), " tables, the job has ", tables));
  }
  for (size_t t = 0; in.status().ok() && t < tables; ++t) {
    if (sizing.slots[t] < sizing.capacity[t]) {
      in.Invalid("slots", absl::StrCat("table ", t, ": ", sizing.slots[t], " slots for ",
                                       sizing.capacity[t], " rows kept"));
    }
  }
  if (in.status().ok() && !in.AtEnd()) in.Invalid("end", "bytes after the sizing");
  if (!in.status().ok()) return in.status();
  return sizing;
}

}  // namespace herald::scheduler
