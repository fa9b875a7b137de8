#include "scheduler/planner/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "scheduler/planner/plan_digest.h"
#include "scheduler/planner/plan_replay.h"
#include "scheduler/planner/staleness_checker.h"

namespace herald::scheduler {

CacheSizing SizeCaches(const std::vector<uint64_t>& distinct_keys,
                       const std::vector<uint32_t>& max_keys_per_sample, double cache_ratio,
                       uint32_t batch_per_worker) {
  CacheSizing sizing;
  for (size_t t = 0; t < distinct_keys.size(); ++t) {
    const uint32_t capacity = static_cast<uint32_t>(
        std::max<double>(1.0, std::llround(cache_ratio * static_cast<double>(distinct_keys[t]))));
    const uint32_t needed = batch_per_worker * std::max<uint32_t>(1, max_keys_per_sample[t]);
    sizing.capacity.push_back(capacity);
    sizing.slots.push_back(std::max(capacity, needed));
  }
  return sizing;
}

void UpdateMaxKeysPerSample(const data::SampleBlock& block, std::vector<uint32_t>* max) {
  const uint32_t tables = block.schema.num_sparse;
  max->resize(std::max<size_t>(max->size(), tables), 0);
  for (size_t s = 0; s < block.size(); ++s) {
    for (uint32_t t = 0; t < tables; ++t) {
      (*max)[t] = std::max((*max)[t], static_cast<uint32_t>(block.Keys(s, t).size()));
    }
  }
}

namespace {

// The smallest value with at least a share q of the values at or below it.
double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<size_t>(rank, 1) - 1];
}

}  // namespace

absl::StatusOr<SimulationResult> Simulate(const SimulationOptions& options, BatchSource source) {
  auto planner = Planner::Create(options.planner);
  if (!planner.ok()) return planner.status();
  // The checker mirrors every cache slot: made only when plans are checked.
  // Policy het is not exact: its plans are checked against its staleness
  // bound instead.
  const bool stale = options.planner.policy.sync == SyncMode::kStale;
  std::optional<PlanReplay> checker;
  std::optional<StalenessChecker> staleness_checker;
  if (options.check && stale) {
    staleness_checker.emplace(options.planner.num_workers, options.planner.slots,
                              options.planner.staleness);
  } else if (options.check) {
    checker.emplace(options.planner.num_workers, options.planner.slots);
  }
  SimulationResult result;
  std::vector<double> times;
  // A read-ahead of two batches, as the scheduler service's loader keeps.
  data::KeyBatch current, next, after;
  auto has_current = source(&current);
  if (!has_current.ok()) return has_current.status();
  bool more = *has_current;
  uint64_t iteration = 0;
  // Whether batch iteration + k is planned (k = 1: the next, 2: the one after).
  auto planned_ahead = [&](uint64_t k) {
    return options.max_iterations == 0 || iteration + k < options.max_iterations;
  };
  bool has_next = false;
  if (planned_ahead(1)) {
    auto got = source(&next);
    if (!got.ok()) return got.status();
    has_next = *got;
  }
  result.plan_digest = kPlanDigestSeed;
  IterationPlan plan_buffer;  // reused: planning allocates nothing once it has grown
  while (more) {
    bool has_after = false;
    if (has_next && planned_ahead(2)) {
      auto got = source(&after);
      if (!got.ok()) return got.status();
      has_after = *got;
    }
    const auto start = std::chrono::steady_clock::now();
    const absl::Status planned = (*planner)->PlanInto(current, has_next ? &next : nullptr,
                                                      has_after ? &after : nullptr, &plan_buffer);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!planned.ok()) return planned;
    const IterationPlan* plan = &plan_buffer;
    result.plan_digest = PlanDigest(*plan, result.plan_digest);
    IterationRecord record;
    record.sched_ms = ms;
    if (const TableProfiler* profiler = (*planner)->profiler()) {
      record.scored_tables = static_cast<int32_t>(profiler->k());
      record.predicted_ms = profiler->predicted_ms();
      record.budget_reachable = profiler->budget_reachable();
    }
    std::vector<PlanCounts> counts;
    if (options.check) {
      const absl::Status checked = stale ? staleness_checker->Check(current, *plan, &counts)
                                         : checker->Check(current, *plan, &counts);
      if (!checked.ok()) return checked;
      // The checker replays one plan at a time; whether a write-back is a
      // hand-off depends on the next batch, so that count is the planner's.
      for (size_t w = 0; w < counts.size(); ++w)
        counts[w].handoffs = plan->workers[w].counts.handoffs;
    } else {
      for (const WorkerPlan& wp : plan->workers) counts.push_back(wp.counts);
    }
    for (const PlanCounts& c : counts) {
      record.total += c;
      record.max_worker_rows =
          std::max(record.max_worker_rows, c.fetched + c.pushed + c.written_back + c.transferred);
    }
    record.workers = std::move(counts);
    result.total += record.total;
    result.sum_max_worker_rows += record.max_worker_rows;
    result.directory_entries_max =
        std::max<uint64_t>(result.directory_entries_max, (*planner)->directory_entries());
    result.iterations.push_back(record);
    times.push_back(ms);
    std::swap(current, next);
    std::swap(next, after);
    more = has_next;
    has_next = has_after;
    ++iteration;
  }
  if (options.check) {
    const absl::Status final_check =
        stale ? staleness_checker->CheckFinal() : checker->CheckFinal();
    if (!final_check.ok()) return final_check;
    if (stale) result.max_staleness_read = staleness_checker->max_behind();
  }
  result.sched_ms_median = Percentile(times, 0.5);
  result.sched_ms_p99 = Percentile(times, 0.99);
  return result;
}

}  // namespace herald::scheduler
