#include "cli/simulate_command.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/data/data_stats.h"
#include "common/data/key_batch_conversion.h"
#include "common/data/open_reader.h"
#include "common/scheduling_defaults.h"
#include "common/status.h"
#include "scheduler/data/key_lifecycle.h"
#include "scheduler/planner/network_cost.h"
#include "scheduler/planner/scheduling_spec.h"
#include "scheduler/planner/simulator.h"

namespace herald::cli {
namespace {

absl::Status Validate(const SimulateOptions& o) {
  if (o.data.empty()) return absl::InvalidArgumentError("--data: required (files or directories)");
  if (o.workers == 0 || o.workers > scheduler::WorkerSet::kMaxWorkers) {
    return absl::InvalidArgumentError(
        absl::StrCat("--workers: ", o.workers, ", want 1..", scheduler::WorkerSet::kMaxWorkers));
  }
  if (o.batch_per_worker == 0) return absl::InvalidArgumentError("--batch-per-worker: must be ≥ 1");
  if (!(o.cache_ratio > 0 && o.cache_ratio <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cache-ratio: ", o.cache_ratio, ", want a fraction in (0, 1]"));
  }
  if (o.dim == 0) return absl::InvalidArgumentError("--dim: must be ≥ 1");
  if (o.threads == 0 || o.threads > 64) {
    return absl::InvalidArgumentError(absl::StrCat("--threads: ", o.threads, ", want 1..64"));
  }
  if (o.link_gbps < 0 || o.latency_us < 0 || o.host_gbps < 0 || o.compute_ms_per_sample < 0) {
    return absl::InvalidArgumentError(
        "--link-gbps, --latency-us, --host-gbps, --compute-ms-per-sample: must be ≥ 0");
  }
  if (o.ps_hosts == 0) return absl::InvalidArgumentError("--ps-hosts: must be ≥ 1");
  return absl::OkStatus();
}

// The mean predicted iteration of the simulated plans on the cluster the
// options describe (only when o.link_gbps > 0).
scheduler::PhaseTimes Predicted(const SimulateOptions& o, const scheduler::SimulationResult& r) {
  scheduler::ClusterModel m;
  m.link_gbps = o.link_gbps;
  m.latency_us = o.latency_us;
  m.host_gbps = o.host_gbps;
  m.ps_hosts = o.ps_hosts;
  m.dim = o.dim;
  m.row_floats = o.row_floats == 0 ? 2 * o.dim : o.row_floats;
  m.dense_params = o.dense_params;
  m.compute_ms_per_sample = o.compute_ms_per_sample;
  m.samples_per_worker = o.batch_per_worker;
  scheduler::PhaseTimes sum;
  for (const scheduler::IterationRecord& it : r.iterations) {
    sum += scheduler::PredictIteration(m, it.workers);
  }
  const double n = std::max<size_t>(1, r.iterations.size());
  for (double* x : {&sum.fetch_ms, &sum.compute_ms, &sum.allreduce_ms, &sum.push_ms,
                    &sum.writeback_ms, &sum.exchange_ms, &sum.overlapped_ms}) {
    *x /= n;
  }
  return sum;
}

// The job spec's scheduling section these flags stand for: simulate plans
// through the same PlannerOptionsFromSpec as a job, and its errors name the
// flag where a job's name the spec field.
absl::StatusOr<proto::SchedulingSpec> SchedulingOf(const SimulateOptions& o) {
  HERALD_ASSIGN_OR_RETURN(proto::PolicyKind policy, scheduler::PolicyKindByName(o.policy));
  HERALD_ASSIGN_OR_RETURN(scheduler::EvictionKind eviction,
                          scheduler::ParseEvictionKind(o.eviction));
  proto::SchedulingSpec s;
  s.set_policy(policy);
  s.set_cache_fraction(static_cast<float>(o.cache_ratio));
  s.set_eviction(eviction == scheduler::EvictionKind::kLfu ? proto::EVICTION_LFU
                                                           : proto::EVICTION_LRU);
  s.set_warm_start(o.warm_start);
  s.set_adaptive_top_k(o.top_k);
  s.set_adaptive_budget_ms(static_cast<float>(o.budget_ms));
  if (o.handoff) s.set_handoff(*o.handoff);
  if (o.serve) s.set_serve(*o.serve);
  if (o.init_on_worker) s.set_init_on_worker(*o.init_on_worker);
  s.set_allocation_passes(o.allocation_passes);
  s.set_staleness(o.staleness);
  if (o.allocation == "location-aware") {
    s.set_allocation(proto::ALLOCATION_LOCATION_AWARE);
  } else if (o.allocation != "default") {
    return absl::InvalidArgumentError(
        absl::StrCat("--allocation: '", o.allocation, "', want default or location-aware"));
  }
  return s;
}

// A scheduling-spec error with the spec's field names replaced by the flags'.
absl::Status InFlagNames(const absl::Status& status) {
  if (status.ok()) return status;
  std::string message(status.message());
  static constexpr std::pair<const char*, const char*> kFlags[] = {
      {"scheduling.adaptive_top_k / adaptive_budget_ms", "--top-k / --budget-ms"},
      {"adaptive_top_k > 0 or adaptive_budget_ms > 0", "--top-k > 0 or --budget-ms > 0"},
      {"scheduling.adaptive_top_k", "--top-k"},
      {"scheduling.adaptive_budget_ms", "--budget-ms"},
      {"scheduling.allocation_passes", "--allocation-passes"},
      {"scheduling.warm_start", "--warm-start"},
      {"scheduling.handoff", "--handoff"},
      {"scheduling.serve", "--serve"},
      {"scheduling.staleness", "--staleness"},
      {"scheduling.allocation", "--allocation"},
      {"scheduling.policy", "--policy"},
      {"scheduling.eviction", "--eviction"},
  };
  for (const auto& [field, flag] : kFlags) {
    for (size_t at = message.find(field); at != std::string::npos;
         at = message.find(field, at + std::strlen(flag))) {
      message.replace(at, std::strlen(field), flag);
    }
  }
  return absl::Status(status.code(), message);
}

double Megabytes(uint64_t rows, uint32_t dim) { return rows * 4.0 * dim / 1e6; }

void PrintText(const SimulateOptions& o, const scheduler::SimulationResult& r, uint64_t cache_rows,
               uint64_t distinct) {
  std::printf("policy %s: %u workers x %u samples per iteration, %zu iterations, eviction %s%s\n",
              o.policy.c_str(), o.workers, o.batch_per_worker, r.iterations.size(),
              o.eviction.c_str(),
              o.warm_start ? ", warm start (hottest keys fetched at iteration 0)" : "");
  std::printf(
      "cache ratio %.4g = per-worker capacity as a fraction of the data's distinct keys, "
      "table by table: %llu rows per worker (data: %llu distinct keys)\n",
      o.cache_ratio, static_cast<unsigned long long>(cache_rows),
      static_cast<unsigned long long>(distinct));
  std::printf("%9s %10s %10s %13s %11s %9s %9s\n", "iteration", "fetched", "pushed", "written_back",
              "max/worker", "hit_rate", "sched_ms");
  for (size_t i = 0; i < r.iterations.size(); ++i) {
    const scheduler::IterationRecord& it = r.iterations[i];
    std::printf("%9zu %10llu %10llu %13llu %11llu %9.3f %9.3f\n", i,
                static_cast<unsigned long long>(it.total.fetched),
                static_cast<unsigned long long>(it.total.pushed),
                static_cast<unsigned long long>(it.total.written_back),
                static_cast<unsigned long long>(it.max_worker_rows),
                it.total.uses == 0 ? 0.0 : static_cast<double>(it.total.hits) / it.total.uses,
                it.sched_ms);
  }
  const scheduler::PlanCounts& t = r.total;
  std::printf(
      "total: %llu rows fetched, %llu gradients pushed, %llu rows written back, "
      "%llu rows sent worker to worker (%llu rows moved)\n",
      static_cast<unsigned long long>(t.fetched), static_cast<unsigned long long>(t.pushed),
      static_cast<unsigned long long>(t.written_back),
      static_cast<unsigned long long>(t.transferred),
      static_cast<unsigned long long>(t.fetched + t.pushed + t.written_back + t.transferred));
  std::printf(
      "bytes at dim %u (float32 values, optimizer state not counted): fetched %.2f MB, "
      "pushed %.2f MB, written back %.2f MB\n",
      o.dim, Megabytes(t.fetched, o.dim), Megabytes(t.pushed, o.dim),
      Megabytes(t.written_back, o.dim));
  if (*o.init_on_worker) {
    std::printf(
        "--init-on-worker: %llu rows never trained initialised by the workers instead "
        "of fetched (not counted as moved)\n",
        static_cast<unsigned long long>(t.initialized));
  }
  if (*o.serve) {
    std::printf(
        "--serve: %llu copies of rows held dirty sent to their other trainers, %llu "
        "gradients sent to those rows' owners instead of the PS (job spec: "
        "scheduling.serve)\n",
        static_cast<unsigned long long>(t.served_copies),
        static_cast<unsigned long long>(t.owner_gradients));
  }
  if (*o.handoff) {
    std::printf(
        "--handoff: rows one worker held dirty and exactly one other trained next went "
        "from the one to the other directly (job spec: scheduling.handoff)\n");
  } else {
    std::printf(
        "of the rows written back, %llu were only passed on to the one other worker "
        "training them next (with --handoff each moves once instead of twice)\n",
        static_cast<unsigned long long>(t.handoffs));
  }
  std::printf(
      "planner row directory at its largest: %llu entries (bounded by the caches and "
      "the batches in flight, not the data)\n",
      static_cast<unsigned long long>(r.directory_entries_max));
  std::printf("max per worker per iteration, summed over iterations: %llu rows\n",
              static_cast<unsigned long long>(r.sum_max_worker_rows));
  std::printf(
      "cache hit rate %.4f; scheduling time per global batch (%u planner thread%s): "
      "median %.3f ms, p99 %.3f ms\n",
      r.hit_rate(), o.threads, o.threads == 1 ? "" : "s", r.sched_ms_median, r.sched_ms_p99);
  if (!r.iterations.empty() && r.iterations.back().scored_tables >= 0) {
    const scheduler::IterationRecord& last = r.iterations.back();
    std::printf(
        "herald-adaptive (top-k %u, budget %.3g ms): tables scored, first/last "
        "iteration: %d/%d; the cost model's planning time at the last: %.3f ms\n",
        o.top_k, o.budget_ms, r.iterations.front().scored_tables, last.scored_tables,
        last.predicted_ms);
    if (!last.budget_reachable) {
      std::printf(
          "budget %.3g ms NOT reachable: the cost model predicts %.3f ms with no table "
          "scored (the planner's base cost), so none is\n",
          o.budget_ms, last.predicted_ms);
    }
  }
  if (o.link_gbps > 0) {
    const scheduler::PhaseTimes t = Predicted(o, r);
    std::printf(
        "predicted on %.3g Gb/s NICs, %.3g us latency, %u PS host%s: %.2f ms per iteration "
        "(fetch %.2f, compute %.2f, all-reduce %.2f of which %.2f beside push %.2f, write-back "
        "%.2f and exchange %.2f), %.0f samples/s, %.0f%% in embedding transfers\n",
        o.link_gbps, o.latency_us, o.ps_hosts, o.ps_hosts == 1 ? "" : "s", t.total_ms(), t.fetch_ms,
        t.compute_ms, t.allreduce_ms, t.overlapped_ms, t.push_ms, t.writeback_ms, t.exchange_ms,
        o.workers * o.batch_per_worker * 1000.0 / t.total_ms(),
        100 * t.transfer_ms() / t.total_ms());
  }
  std::printf("plan digest %016llx (FNV-1a of every plan: equal digests, equal plans)\n",
              static_cast<unsigned long long>(r.plan_digest));
  if (!o.check) {
    std::printf("plans NOT checked (--nocheck)\n");
  } else if (o.policy == "het") {
    std::printf(
        "every plan replayed by the staleness checker: NOT exact (staleness %u): every read "
        "within HET's bound (the most any read was behind the global clock: %llu clocks), "
        "every held gradient reached the PS\n",
        o.staleness, static_cast<unsigned long long>(r.max_staleness_read));
  } else {
    std::printf(
        "every plan replayed by the plan checker: exact BSP, no stale training, "
        "no lost update\n");
  }
}

// What admission and expiry changed: the keys given rows (the tables'
// size once trained), those still waiting, the lookups dropped, the rows
// expired and the most rows the tables held after any batch.
void PrintKeyLifecycle(const SimulateOptions& o, const scheduler::KeyLifecycle::Counts& c,
                       uint64_t rows_max) {
  if (o.admission > 1) {
    std::printf(
        "admission min_count %u: %llu keys admitted (rows the tables hold), %llu seen fewer "
        "times (no row), %llu lookups dropped\n",
        o.admission, static_cast<unsigned long long>(c.admitted),
        static_cast<unsigned long long>(c.waiting), static_cast<unsigned long long>(c.dropped));
  }
  if (o.expire_after > 0) {
    std::printf(
        "expiry after %llu batches: %llu rows expired; the tables hold %llu rows at the end, "
        "at most %llu\n",
        static_cast<unsigned long long>(o.expire_after), static_cast<unsigned long long>(c.expired),
        static_cast<unsigned long long>(c.admitted), static_cast<unsigned long long>(rows_max));
  }
}

void PrintJson(const SimulateOptions& o, const scheduler::SimulationResult& r, uint64_t cache_rows,
               const scheduler::KeyLifecycle::Counts& admitted, uint64_t rows_max) {
  const scheduler::PlanCounts& t = r.total;
  std::string out = absl::StrCat(
      "{\"policy\":\"", o.policy, "\",\"workers\":", o.workers,
      ",\"batch_per_worker\":", o.batch_per_worker, ",\"iterations\":", r.iterations.size(),
      ",\"cache_ratio\":", o.cache_ratio, ",\"cache_rows_per_worker\":", cache_rows,
      ",\"eviction\":\"", o.eviction, "\",\"dim\":", o.dim, ",\"rows_fetched\":", t.fetched,
      ",\"rows_pushed\":", t.pushed, ",\"rows_written_back\":", t.written_back,
      ",\"rows_handed_off\":", t.handoffs, ",\"rows_transferred\":", t.transferred,
      ",\"handoff\":", *o.handoff ? "true" : "false", ",\"rows_served_copies\":", t.served_copies,
      ",\"rows_owner_gradients\":", t.owner_gradients, ",\"serve\":", *o.serve ? "true" : "false",
      ",\"rows_initialized\":", t.initialized,
      ",\"init_on_worker\":", *o.init_on_worker ? "true" : "false",
      ",\"allocation_passes\":", o.allocation_passes, ",\"flush_every\":", o.flush_every,
      ",\"staleness\":", o.staleness, ",\"allocation\":\"", o.allocation, "\"",
      ",\"max_staleness_read\":", r.max_staleness_read,
      ",\"bytes_fetched\":", t.fetched * 4 * o.dim, ",\"bytes_pushed\":", t.pushed * 4 * o.dim,
      ",\"bytes_written_back\":", t.written_back * 4 * o.dim,
      ",\"max_worker_rows_sum\":", r.sum_max_worker_rows,
      ",\"directory_entries_max\":", r.directory_entries_max, ",\"hit_rate\":", r.hit_rate(),
      ",\"sched_ms_median\":", r.sched_ms_median, ",\"sched_ms_p99\":", r.sched_ms_p99,
      ",\"threads\":", o.threads, ",\"plan_digest\":\"", absl::Hex(r.plan_digest, absl::kZeroPad16),
      "\"", ",\"checked\":", o.check ? "true" : "false",
      ",\"warm_start\":", o.warm_start ? "true" : "false");
  if (o.admission > 1) {
    absl::StrAppend(
        &out, ",\"admission_min_count\":", o.admission, ",\"keys_admitted\":", admitted.admitted,
        ",\"keys_waiting\":", admitted.waiting, ",\"lookups_dropped\":", admitted.dropped);
  }
  if (o.expire_after > 0) {
    absl::StrAppend(&out, ",\"expire_after\":", o.expire_after,
                    ",\"rows_expired\":", admitted.expired, ",\"table_rows\":", admitted.admitted,
                    ",\"table_rows_max\":", rows_max);
  }
  if (o.link_gbps > 0) {
    const scheduler::PhaseTimes t = Predicted(o, r);
    absl::StrAppend(
        &out, ",\"predicted_ms_per_iteration\":", t.total_ms(),
        ",\"predicted_samples_per_second\":",
        o.workers * o.batch_per_worker * 1000.0 / t.total_ms(),
        ",\"predicted_fetch_ms\":", t.fetch_ms, ",\"predicted_compute_ms\":", t.compute_ms,
        ",\"predicted_allreduce_ms\":", t.allreduce_ms,
        ",\"predicted_allreduce_overlapped_ms\":", t.overlapped_ms,
        ",\"predicted_push_ms\":", t.push_ms, ",\"predicted_writeback_ms\":", t.writeback_ms,
        ",\"predicted_exchange_ms\":", t.exchange_ms,
        ",\"predicted_transfer_share\":", t.transfer_ms() / t.total_ms());
  }
  if (o.policy == "herald-adaptive") {
    absl::StrAppend(&out, ",\"top_k\":", o.top_k, ",\"budget_ms\":", o.budget_ms);
    if (!r.iterations.empty()) {
      const scheduler::IterationRecord& last = r.iterations.back();
      absl::StrAppend(&out, ",\"predicted_ms\":", last.predicted_ms,
                      ",\"budget_reachable\":", last.budget_reachable ? "true" : "false");
    }
  }
  out += ",\"per_iteration\":[";
  for (size_t i = 0; i < r.iterations.size(); ++i) {
    const scheduler::IterationRecord& it = r.iterations[i];
    absl::StrAppend(&out, i == 0 ? "" : ",", "{\"fetched\":", it.total.fetched,
                    ",\"pushed\":", it.total.pushed, ",\"written_back\":", it.total.written_back,
                    ",\"max_worker_rows\":", it.max_worker_rows, ",\"hits\":", it.total.hits,
                    ",\"uses\":", it.total.uses, ",\"sched_ms\":", it.sched_ms);
    if (it.scored_tables >= 0) absl::StrAppend(&out, ",\"scored_tables\":", it.scored_tables);
    out += "}";
  }
  out += "]}";
  std::printf("%s\n", out.c_str());
}

}  // namespace

absl::Status RunSimulate(const SimulateOptions& options) {
  HERALD_RETURN_IF_ERROR(Validate(options));
  HERALD_ASSIGN_OR_RETURN(proto::SchedulingSpec scheduling, SchedulingOf(options));
  ResolveSchedulingDefaults(&scheduling);
  SimulateOptions o = options;  // with the policy's defaults filled in, as reported
  o.handoff = scheduling.handoff();
  o.serve = scheduling.serve();
  o.init_on_worker = scheduling.init_on_worker();
  o.allocation_passes = scheduling.allocation_passes();
  HERALD_ASSIGN_OR_RETURN(data::FileFormat format, data::ParseFileFormat(o.format));
  const uint64_t batch = uint64_t{o.workers} * o.batch_per_worker;
  const uint64_t limit = o.iterations == 0 ? UINT64_MAX : o.iterations * batch;

  // Pass 1: distinct keys and multi-hot width per table over the samples simulated.
  data::ReaderOptions ro;
  HERALD_ASSIGN_OR_RETURN(auto reader, data::OpenReader(format, o.data, ro));
  HERALD_RETURN_IF_ERROR(
      InFlagNames(scheduler::ValidateSchedulingSpec(scheduling, reader->schema().num_sparse)));
  data::DataStatsCollector stats(reader->schema());
  std::vector<uint32_t> max_keys;
  data::SampleBlock block(reader->schema());
  for (uint64_t seen = 0; seen < limit;) {
    block.Clear();
    HERALD_ASSIGN_OR_RETURN(size_t n,
                            reader->Read(std::min<uint64_t>(65536, limit - seen), &block));
    if (n == 0) break;
    stats.Add(block);
    scheduler::UpdateMaxKeysPerSample(block, &max_keys);
    seen += n;
  }
  const data::DatasetSummary summary = stats.Summarize();
  if (summary.rows < batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--data: ", summary.rows, " samples, fewer than one global batch (", batch, ")"));
  }
  std::vector<uint64_t> distinct;
  uint64_t distinct_total = 0;
  for (const auto& t : summary.tables) {
    distinct.push_back(t.distinct_keys);
    distinct_total += t.distinct_keys;
  }
  max_keys.resize(distinct.size(), 1);
  const scheduler::CacheSizing sizing =
      scheduler::SizeCaches(distinct, max_keys, o.cache_ratio, o.batch_per_worker);
  uint64_t cache_rows = 0;
  for (uint32_t c : sizing.capacity) cache_rows += c;
  std::vector<std::vector<Key>> warm_keys;
  if (o.warm_start) {  // the hottest keys of the simulated data, as `data stats` counts them
    const uint32_t most = *std::max_element(sizing.capacity.begin(), sizing.capacity.end());
    const data::DatasetSummary hot = stats.Summarize(most);
    for (const auto& table : hot.tables) {
      warm_keys.emplace_back();
      for (const auto& [key, count] : table.hottest) warm_keys.back().push_back(key);
    }
  }

  // Pass 2: global batches, planned one ahead (filtered by admission and
  // expiry as a job's training stream is).
  HERALD_ASSIGN_OR_RETURN(auto batches_reader, data::OpenReader(format, o.data, ro));
  uint64_t batches_read = 0;
  std::unique_ptr<scheduler::KeyLifecycle> admission;
  uint64_t rows_max = 0;  // the tables' rows after the fullest batch
  if (o.admission > 1 || o.expire_after > 0) {
    admission = std::make_unique<scheduler::KeyLifecycle>(std::vector<scheduler::KeyRule>(
        summary.tables.size(), scheduler::KeyRule{o.admission, o.expire_after}));
  }
  auto source = [&](data::KeyBatch* out) -> absl::StatusOr<bool> {
    if (batches_read * batch >= limit) return false;
    block.Clear();
    while (block.size() < batch) {
      HERALD_ASSIGN_OR_RETURN(size_t n, batches_reader->Read(batch - block.size(), &block));
      if (n == 0) return false;  // a partial last batch is not simulated
    }
    *out = data::ToKeyBatch(block, 0, block.size());
    if (admission != nullptr) {
      admission->Filter(batches_read, out);
      rows_max = std::max(rows_max, admission->counts().admitted);
    }
    ++batches_read;
    return true;
  };
  scheduler::PlannerResources resources;
  resources.num_workers = o.workers;
  resources.capacity = sizing.capacity;
  resources.slots = sizing.slots;
  resources.warm_keys = std::move(warm_keys);
  resources.seed = o.seed;
  resources.threads = o.threads;
  resources.flush_every = {o.flush_every};
  scheduler::SimulationOptions so;
  absl::StatusOr<scheduler::PlannerOptions> planner =
      scheduler::PlannerOptionsFromSpec(scheduling, std::move(resources));
  if (!planner.ok()) return InFlagNames(planner.status());
  so.planner = *std::move(planner);
  so.max_iterations = o.iterations;
  so.check = o.check;
  HERALD_ASSIGN_OR_RETURN(scheduler::SimulationResult result, scheduler::Simulate(so, source));
  const scheduler::KeyLifecycle::Counts admitted =
      admission != nullptr ? admission->counts() : scheduler::KeyLifecycle::Counts{};
  if (o.json) {
    PrintJson(o, result, cache_rows, admitted, rows_max);
  } else {
    PrintText(o, result, cache_rows, distinct_total);
    if (admission != nullptr) PrintKeyLifecycle(o, admitted, rows_max);
  }
  return absl::OkStatus();
}

}  // namespace herald::cli
