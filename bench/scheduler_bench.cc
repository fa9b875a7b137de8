// Scheduler benchmark: rows moved per policy against vanilla (same data, same
// run), herald-adaptive's tables scored vs savings and time (--noadaptive to
// skip), and the planner's time per global batch against two baselines
// measured in the same run: vanilla's planning, and the lookup floor
// (lookup_floor.h: the key lookups and row reads any planner pays).
//
//   bazel build -c opt //bench:scheduler_bench && ./bazel-bin/bench/scheduler_bench
//
// Data: the generator's Criteo-shaped samples (Kaggle cardinalities), both
// entity-correlated and independent columns. Cache: 10% of the distinct keys
// of the simulated samples, per table and worker. Every plan is replayed
// through the PlanReplay (exact BSP: a saving that skips synchronisation
// would fail it), except in the timing-only runs.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "bench/lookup_floor.h"
#include "common/data/data_stats.h"
#include "common/data/generator.h"
#include "common/data/key_batch_conversion.h"
#include "scheduler/planner/scheduling_spec.h"
#include "scheduler/planner/simulator.h"

ABSL_FLAG(uint32_t, iterations, 100, "iterations per quality run");
ABSL_FLAG(uint32_t, batch_per_worker, 128, "samples per worker per iteration");
ABSL_FLAG(double, cache_ratio, 0.1, "per-worker cache as a fraction of distinct keys");
ABSL_FLAG(uint32_t, timing_iterations, 50, "iterations of the 8×128 and 80×256 timing runs");
ABSL_FLAG(uint32_t, timing_warmup, 0,
          "iterations planned before the timed ones (caches sized for all of them), so the "
          "timing is of a job that has run that long");
ABSL_FLAG(bool, large, true, "also time 80 workers × 256 samples");
ABSL_FLAG(bool, quality, true, "run the quality tables (--noquality: timing only)");
ABSL_FLAG(bool, adaptive, true, "run the herald-adaptive table");

namespace herald {
namespace {

using scheduler::SimulationResult;

struct Dataset {
  data::SampleBlock block;
  scheduler::CacheSizing sizing;
};

Dataset MakeData(data::Correlation correlation, uint64_t samples, uint32_t batch_per_worker,
                 double cache_ratio) {
  data::GeneratorOptions g;
  g.seed = 7;
  g.correlation = correlation;
  data::SyntheticGenerator generator(g);
  Dataset d{data::SampleBlock(generator.schema()), {}};
  generator.Generate(0, samples, &d.block);
  data::DataStatsCollector stats(generator.schema());
  stats.Add(d.block);
  std::vector<uint64_t> distinct;
  for (const auto& t : stats.Summarize().tables) distinct.push_back(t.distinct_keys);
  std::vector<uint32_t> max_keys;
  scheduler::UpdateMaxKeysPerSample(d.block, &max_keys);
  d.sizing = scheduler::SizeCaches(distinct, max_keys, cache_ratio, batch_per_worker);
  return d;
}

// The planner's optional features a run turns on (PlannerOptions).
struct Extras {
  bool handoff = false, serve = false, init = false;
  uint32_t passes = 1;
};

SimulationResult Run(const Dataset& d, const std::string& policy, uint32_t workers,
                     uint32_t batch_per_worker, uint64_t iterations, bool check,
                     const scheduler::AdaptiveOptions& adaptive = {}, uint32_t threads = 1,
                     const Extras& extras = {}) {
  proto::SchedulingSpec spec;
  spec.set_policy(*scheduler::PolicyKindByName(policy));
  spec.set_cache_fraction(1);  // the capacities below are the data's
  spec.set_adaptive_top_k(adaptive.top_k);
  spec.set_adaptive_budget_ms(static_cast<float>(adaptive.budget_ms));
  spec.set_handoff(extras.handoff);
  spec.set_serve(extras.serve);
  spec.set_init_on_worker(extras.init);
  spec.set_allocation_passes(extras.passes);
  scheduler::PlannerResources resources;
  resources.num_workers = workers;
  resources.capacity = d.sizing.capacity;
  resources.slots = d.sizing.slots;
  resources.threads = threads;
  auto planner = scheduler::PlannerOptionsFromSpec(spec, std::move(resources));
  if (!planner.ok()) {
    std::fprintf(stderr, "scheduler_bench: %s\n", std::string(planner.status().message()).c_str());
    std::exit(1);
  }
  scheduler::SimulationOptions o;
  o.planner = *std::move(planner);
  o.max_iterations = iterations;
  o.check = check;
  const size_t batch = size_t{workers} * batch_per_worker;
  size_t next = 0;
  auto source = [&](data::KeyBatch* out) -> absl::StatusOr<bool> {
    if (next + batch > d.block.size()) return false;
    *out = data::ToKeyBatch(d.block, next, next + batch);
    next += batch;
    return true;
  };
  auto result = scheduler::Simulate(o, source);
  if (!result.ok()) {
    std::fprintf(stderr, "%s, %u workers: %s\n", policy.c_str(), workers,
                 std::string(result.status().message()).c_str());
    std::exit(1);
  }
  return *result;
}

// The savings target at 8 workers for this kind of data.
void Quality(const char* name, data::Correlation correlation, double target_percent) {
  const uint32_t bpw = absl::GetFlag(FLAGS_batch_per_worker);
  const uint64_t iterations = absl::GetFlag(FLAGS_iterations);
  std::printf(
      "\n== %s data, %u samples per worker, cache %.0f%% of distinct keys, %llu iterations\n", name,
      bpw, 100 * absl::GetFlag(FLAGS_cache_ratio), static_cast<unsigned long long>(iterations));
  std::printf("%-8s %-24s %12s %12s %12s %12s %12s %9s %10s %8s\n", "workers", "policy", "fetched",
              "pushed", "written_back", "to_workers", "total", "vs_vanilla", "max/worker",
              "hit_rate");
  for (uint32_t workers : {2u, 4u, 8u}) {
    const Dataset d = MakeData(correlation, uint64_t{workers} * bpw * iterations, bpw,
                               absl::GetFlag(FLAGS_cache_ratio));
    double vanilla_total = 0, vanilla_init_total = 0, vanilla_max = 0, best = 0, init_total = 0;
    // Policies, then herald with hand-offs, and with hand-offs and rows
    // served by their owner (scheduler.md), also with two allocation passes
    // (x2); last, vanilla and the best herald with rows never trained
    // initialised by the workers (+init).
    struct Config {
      const char* label;
      const char* policy;
      Extras extras;
    };
    for (const Config& c :
         {Config{"vanilla", "vanilla", {false, false, false, 1}},
          Config{"herald-alloc-only", "herald-alloc-only", {false, false, false, 1}},
          Config{"herald-comm-only", "herald-comm-only", {false, false, false, 1}},
          Config{"herald", "herald", {false, false, false, 1}},
          Config{"herald +handoff", "herald", {true, false, false, 1}},
          Config{"herald +handoff +serve", "herald", {true, true, false, 1}},
          Config{"herald +h-o +serve x2", "herald", {true, true, false, 2}},
          Config{"nocache", "nocache", {false, false, false, 1}},
          Config{"vanilla +init", "vanilla", {false, false, true, 1}},
          Config{"herald +h-o +serve +init", "herald", {true, true, true, 1}},
          Config{"herald +h-o +s +init x2", "herald", {true, true, true, 2}}}) {
      const SimulationResult r =
          Run(d, c.policy, workers, bpw, iterations, /*check=*/true, {}, 1, c.extras);
      const double total = static_cast<double>(r.total.fetched + r.total.pushed +
                                               r.total.written_back + r.total.transferred);
      if (std::string(c.label) == "vanilla") {
        vanilla_total = total;
        vanilla_max = static_cast<double>(r.sum_max_worker_rows);
      }
      const double saving = 100.0 * (1.0 - total / vanilla_total);
      if (std::string(c.policy) != "nocache" && !c.extras.init) best = std::max(best, saving);
      if (c.extras.init && std::string(c.policy) == "vanilla") vanilla_init_total = total;
      if (c.extras.init && std::string(c.policy) != "vanilla") {
        init_total = init_total == 0 ? total : std::min(init_total, total);
      }
      std::printf("%-8u %-24s %12llu %12llu %12llu %12llu %12.0f %8.1f%% %9.2fx %8.3f\n", workers,
                  c.label, static_cast<unsigned long long>(r.total.fetched),
                  static_cast<unsigned long long>(r.total.pushed),
                  static_cast<unsigned long long>(r.total.written_back),
                  static_cast<unsigned long long>(r.total.transferred), total, saving,
                  static_cast<double>(r.sum_max_worker_rows) / vanilla_max, r.hit_rate());
    }
    if (workers == 8) {
      std::printf("best saving at 8 workers: %.1f%%; target ≥ %.0f%%: %s\n", best, target_percent,
                  best >= target_percent ? "met" : "NOT met");
      std::printf("best with +init: %.1f%% against vanilla, %.1f%% against vanilla +init\n",
                  100.0 * (1.0 - init_total / vanilla_total),
                  100.0 * (1.0 - init_total / vanilla_init_total));
    }
  }
}

// Herald's planning time against vanilla's in the same run (the baseline)
// and, for the shapes the issue names, against its target: `target_ms` on
// `target_threads` threads (0: no target).
// The median and p99 of the planning times of iterations [from, end).
std::pair<double, double> TimesFrom(const SimulationResult& r, uint64_t from) {
  std::vector<double> ms;
  for (size_t i = from; i < r.iterations.size(); ++i) ms.push_back(r.iterations[i].sched_ms);
  std::sort(ms.begin(), ms.end());
  if (ms.empty()) return {0, 0};
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]};
}

void Timing(uint32_t workers, uint32_t bpw, double target_ms, uint32_t target_threads) {
  const uint64_t warmup = absl::GetFlag(FLAGS_timing_warmup);
  const uint64_t iterations = warmup + absl::GetFlag(FLAGS_timing_iterations);
  const Dataset d = MakeData(data::Correlation::kEntities, uint64_t{workers} * bpw * iterations,
                             bpw, absl::GetFlag(FLAGS_cache_ratio));
  // The second baseline: the key lookups and one record read per use that
  // any directory-based planner pays (lookup_floor.h), on one thread.
  std::vector<data::KeyBatch> batches;
  const size_t batch = size_t{workers} * bpw;
  for (size_t begin = 0; begin + batch <= d.block.size(); begin += batch) {
    batches.push_back(data::ToKeyBatch(d.block, begin, begin + batch));
  }
  const bench::FloorTimes floor = bench::TimeLookupFloor(batches);
  const double floor_ms = floor.median_ms;
  std::printf(
      "%u workers × %u samples × 26 tables, lookup floor: %.3f ms median, %.3f ms p99 "
      "per global batch (1 thread; key lookups and one record read per use, nothing "
      "planned)",
      workers, bpw, floor_ms, floor.p99_ms);
  if (target_ms > 0 && floor_ms > 0) {
    std::printf("; the target is %.2f× the floor", target_ms / floor_ms);
  }
  std::printf("\n");
  for (uint32_t threads : {1u, 2u}) {
    double vanilla_ms = 0;
    // herald x2: two allocation passes (what they cost; the target is
    // herald's default, one pass).
    for (const char* label : {"vanilla", "herald", "herald x2"}) {
      const std::string policy = std::string(label) == "vanilla" ? "vanilla" : "herald";
      Extras extras;
      extras.passes = std::string(label) == "herald x2" ? 2 : 1;
      const SimulationResult r =
          Run(d, policy, workers, bpw, iterations, /*check=*/false, {}, threads, extras);
      const auto [median, p99] =
          warmup == 0 ? std::pair(r.sched_ms_median, r.sched_ms_p99) : TimesFrom(r, warmup);
      std::printf(
          "%u workers × %u samples × 26 tables, %-9s: scheduling %.3f ms median, %.3f ms "
          "p99 per global batch (%u thread%s%s)",
          workers, bpw, label, median, p99, threads, threads == 1 ? "" : "s",
          warmup == 0 ? "" : absl::StrCat(", after ", warmup, " iterations").c_str());
      if (policy == "vanilla") {
        vanilla_ms = median;
      } else {
        std::printf("; %.2f× vanilla's", median / vanilla_ms);
        if (floor_ms > 0) std::printf(", %.2f× the floor", median / floor_ms);
        if (target_ms > 0 && threads == target_threads && extras.passes == 1) {
          std::printf("; target ≤ %.0f ms: %.2f× the target (%s)", target_ms, median / target_ms,
                      median <= target_ms ? "met" : "NOT met");
        }
      }
      std::printf("\n");
    }
  }
}

// herald-adaptive at 8 workers: the tables scored (fixed top-k, or chosen by
// the cost model to fit a budget), rows moved against vanilla and herald,
// predicted and measured planning time. Plans checked.
void Adaptive(const char* name, data::Correlation correlation) {
  const uint32_t bpw = absl::GetFlag(FLAGS_batch_per_worker), workers = 8;
  const uint64_t iterations = absl::GetFlag(FLAGS_iterations);
  const Dataset d = MakeData(correlation, uint64_t{workers} * bpw * iterations, bpw,
                             absl::GetFlag(FLAGS_cache_ratio));
  std::printf("\n== herald-adaptive, %s data, 8 workers × %u, %llu iterations\n", name, bpw,
              static_cast<unsigned long long>(iterations));
  std::printf("%-22s %7s %12s %10s %13s %13s\n", "setting", "k_last", "total", "vs_vanilla",
              "predicted_ms", "measured_ms");
  auto total = [](const SimulationResult& r) {
    return static_cast<double>(r.total.fetched + r.total.pushed + r.total.written_back);
  };
  const double vanilla = total(Run(d, "vanilla", workers, bpw, iterations, /*check=*/true));
  const SimulationResult herald = Run(d, "herald", workers, bpw, iterations, /*check=*/true);
  std::printf("%-22s %7d %12.0f %9.1f%% %13s %13.3f\n", "herald (26 tables)", 26, total(herald),
              100.0 * (1.0 - total(herald) / vanilla), "-", herald.sched_ms_median);
  struct Setting {
    uint32_t top_k;
    double budget_ms;
  };
  for (const Setting& s : std::vector<Setting>{
           {26, 0}, {13, 0}, {6, 0}, {3, 0}, {0, 5.0}, {0, 4.5}, {0, 4.0}, {0, 3.8}}) {
    scheduler::AdaptiveOptions a;
    a.top_k = s.top_k;
    a.budget_ms = s.budget_ms;
    const SimulationResult r = Run(d, "herald-adaptive", workers, bpw, iterations, true, a);
    std::vector<double> predicted;
    for (const auto& it : r.iterations) predicted.push_back(it.predicted_ms);
    std::sort(predicted.begin(), predicted.end());
    const std::string setting = s.top_k > 0
                                    ? "top-k " + std::to_string(s.top_k)
                                    : "budget " + std::to_string(s.budget_ms).substr(0, 4) + " ms";
    std::printf("%-22s %7d %12.0f %9.1f%% %13.3f %13.3f\n", setting.c_str(),
                r.iterations.back().scored_tables, total(r), 100.0 * (1.0 - total(r) / vanilla),
                predicted[predicted.size() / 2], r.sched_ms_median);
  }
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_quality)) {
    // Targets: ≥ 48% on entity data; ≥ 24% (twice the published
    // implementation's ~12%) on independent columns.
    herald::Quality("entity-correlated", herald::data::Correlation::kEntities, 48);
    herald::Quality("independent-column", herald::data::Correlation::kNone, 24);
  }
  if (absl::GetFlag(FLAGS_adaptive)) {
    herald::Adaptive("entity-correlated", herald::data::Correlation::kEntities);
    herald::Adaptive("independent-column", herald::data::Correlation::kNone);
  }
  std::printf("\n== scheduling time\n");
  herald::Timing(8, 128, /*target_ms=*/1, /*target_threads=*/1);
  if (absl::GetFlag(FLAGS_large)) herald::Timing(80, 256, /*target_ms=*/25, /*target_threads=*/2);
  return 0;
}
