// The allocator against the optimum: on tiny instances (one sample per worker
// per batch, ≤ 8 workers) the exhaustive search finds the allocation sequence
// with the fewest transmissions under herald's synchronisation (ownership +
// communication plans) and the same caches; this prints the location-aware
// heuristic's transmissions over that optimum, and vanilla's (random split,
// every row through the PS) over the same optimum, for both kinds of data.
//
//   bazel build -c opt //bench:allocation_yardstick && ./bazel-bin/bench/allocation_yardstick

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "scheduler/planner/exhaustive_search.h"
#include "scheduler/planner/tiny_instance.h"

ABSL_FLAG(uint32_t, instances, 20, "random instances per configuration");
ABSL_FLAG(uint32_t, capacity, 2, "cache rows per worker and table");

namespace herald {
namespace {

using scheduler::ExhaustiveOptions;
using scheduler::TinyInstanceOptions;
using scheduler::TinyKind;

struct Config {
  uint32_t workers;
  uint32_t batches;
};

ExhaustiveOptions Options(const std::string& policy, uint32_t workers, uint32_t tables) {
  ExhaustiveOptions o;
  o.planner.policy = *scheduler::PolicyByName(policy);
  o.planner.num_workers = workers;
  o.planner.capacity.assign(tables, absl::GetFlag(FLAGS_capacity));
  o.planner.slots.assign(tables, absl::GetFlag(FLAGS_capacity) + 1);
  o.max_plans = 200'000'000;
  return o;
}

uint64_t PolicyCost(const std::string& policy, const TinyInstanceOptions& t,
                    const std::vector<data::KeyBatch>& batches) {
  auto cost = scheduler::PolicyTransmissions(Options(policy, t.workers, t.tables).planner, batches);
  if (!cost.ok()) {
    std::fprintf(stderr, "%s: %s\n", policy.c_str(), std::string(cost.status().message()).c_str());
    std::exit(1);
  }
  return *cost;
}

void Run(TinyKind kind, const Config& c) {
  double herald_sum = 0, herald_max = 0, vanilla_sum = 0;
  uint32_t herald_optimal = 0;
  uint64_t plans = 0;
  const uint32_t n = absl::GetFlag(FLAGS_instances);
  for (uint32_t i = 0; i < n; ++i) {
    TinyInstanceOptions t;
    t.kind = kind;
    t.workers = c.workers;
    t.batches = c.batches;
    t.vocabulary = 2 * c.workers + 2;
    t.entities = c.workers + 2;
    t.seed = 1000 + i;
    const auto batches = scheduler::MakeTinyInstance(t);
    auto result =
        scheduler::SearchOptimalAllocation(Options("herald", c.workers, t.tables), batches);
    if (!result.ok()) {
      std::fprintf(stderr, "%u workers × %u batches: %s\n", c.workers, c.batches,
                   std::string(result.status().message()).c_str());
      std::exit(1);
    }
    const double herald = static_cast<double>(result->heuristic) / result->optimum;
    herald_sum += herald;
    herald_max = std::max(herald_max, herald);
    herald_optimal += result->heuristic == result->optimum;
    vanilla_sum += static_cast<double>(PolicyCost("vanilla", t, batches)) / result->optimum;
    plans += result->plans;
  }
  std::printf("| %s | %u | %u | %.3f | %.3f | %u/%u | %.3f | %.0f |\n",
              kind == TinyKind::kEntity ? "entity" : "independent", c.workers, c.batches,
              herald_sum / n, herald_max, herald_optimal, n, vanilla_sum / n,
              static_cast<double>(plans) / n);
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::printf(
      "Tiny instances: 1 sample per worker per batch, 3 tables of 2W+2 keys, "
      "cache %u rows per worker and table; transmissions = fetched + pushed + "
      "written back (final flush included); optimum under herald's synchronisation.\n\n",
      absl::GetFlag(FLAGS_capacity));
  std::printf(
      "| data | workers | batches | herald/optimum mean | max | herald optimal | "
      "vanilla/optimum mean | plans searched per instance |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  const std::vector<herald::Config> configs = {{2, 10}, {3, 6}, {4, 4}, {8, 2}};
  for (auto kind :
       {herald::scheduler::TinyKind::kEntity, herald::scheduler::TinyKind::kIndependent}) {
    for (const auto& c : configs) herald::Run(kind, c);
  }
  return 0;
}
