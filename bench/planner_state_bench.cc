// What a resumed job pays to get its planner back: saving the planner's
// state into a checkpoint and loading it (Planner::SaveState / LoadState),
// against the baseline measured in the same run, replaying the planner over
// every iteration before the checkpoint (what a restarted scheduler did
// before checkpoints held the state). Also checks that the loaded planner's
// next plans equal the saved one's, digest for digest.
//
//   bazel build -c opt //bench:planner_state_bench
//   ./bazel-bin/bench/planner_state_bench [--workers 8] [--iterations 200,400,800]
//
// Data: the generator's Criteo-shaped samples (Kaggle cardinalities,
// entity-correlated), the herald policy with a job's defaults, caches of
// 10% of the distinct keys per table and worker.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/data/data_stats.h"
#include "common/data/generator.h"
#include "common/data/key_batch_conversion.h"
#include "scheduler/planner/plan_digest.h"
#include "scheduler/planner/planner.h"
#include "scheduler/planner/scheduling_spec.h"
#include "scheduler/planner/simulator.h"

ABSL_FLAG(uint32_t, workers, 8, "workers");
ABSL_FLAG(uint32_t, batch_per_worker, 128, "samples per worker per iteration");
ABSL_FLAG(std::string, iterations, "200,400,800", "checkpoint iterations to measure, ascending");

namespace herald {
namespace {

double MsSince(absl::Time start) { return absl::ToDoubleMilliseconds(absl::Now() - start); }

void Fail(const absl::Status& s) {
  std::fprintf(stderr, "planner_state_bench: %s\n", std::string(s.message()).c_str());
  std::exit(1);
}

int Main() {
  const uint32_t workers = absl::GetFlag(FLAGS_workers);
  const uint32_t bpw = absl::GetFlag(FLAGS_batch_per_worker);
  std::vector<uint64_t> points;
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_iterations), ',')) {
    uint64_t it;
    if (!absl::SimpleAtoi(part, &it) || it == 0 || (!points.empty() && it <= points.back())) {
      Fail(absl::InvalidArgumentError("--iterations: ascending positive numbers"));
    }
    points.push_back(it);
  }
  const uint64_t total = points.back() + 3;  // the checkpoint's read-ahead and a check
  const size_t batch = size_t{workers} * bpw;

  data::GeneratorOptions g;
  g.seed = 7;
  g.correlation = data::Correlation::kEntities;
  data::SyntheticGenerator generator(g);
  data::SampleBlock block(generator.schema());
  generator.Generate(0, total * batch, &block);
  data::DataStatsCollector stats(generator.schema());
  stats.Add(block);
  std::vector<uint64_t> distinct;
  for (const auto& t : stats.Summarize().tables) distinct.push_back(t.distinct_keys);
  std::vector<uint32_t> max_keys;
  scheduler::UpdateMaxKeysPerSample(block, &max_keys);
  const scheduler::CacheSizing sizing = scheduler::SizeCaches(distinct, max_keys, 0.1, bpw);
  std::vector<data::KeyBatch> batches;
  for (size_t begin = 0; begin + batch <= block.size(); begin += batch) {
    batches.push_back(data::ToKeyBatch(block, begin, begin + batch));
  }

  proto::SchedulingSpec spec;
  spec.set_policy(proto::POLICY_HERALD);
  spec.set_cache_fraction(1);  // the capacities below are the data's
  scheduler::PlannerResources resources;
  resources.num_workers = workers;
  resources.capacity = sizing.capacity;
  resources.slots = sizing.slots;
  auto options = scheduler::PlannerOptionsFromSpec(spec, std::move(resources));
  if (!options.ok()) Fail(options.status());

  // Plans iterations [from, to) as a job does (two batches read ahead).
  scheduler::IterationPlan plan;
  auto plan_range = [&](scheduler::Planner* p, uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i) {
      const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
      const data::KeyBatch* after = i + 2 < batches.size() ? &batches[i + 2] : nullptr;
      if (absl::Status s = p->PlanInto(batches[i], next, after, &plan); !s.ok()) Fail(s);
    }
  };

  std::printf(
      "planner_state_bench: %u workers × %u samples × %zu tables, herald, caches of 10%% "
      "of the distinct keys (%u slots in the largest table)\n",
      workers, bpw, sizing.capacity.size(),
      *std::max_element(sizing.slots.begin(), sizing.slots.end()));
  auto running = scheduler::Planner::Create(*options);
  if (!running.ok()) Fail(running.status());
  uint64_t planned = 0;
  for (uint64_t at : points) {
    plan_range(running->get(), planned, at);
    planned = at;
    absl::Time start = absl::Now();
    auto bytes = (*running)->SaveState();
    if (!bytes.ok()) Fail(bytes.status());
    const double save_ms = MsSince(start);
    scheduler::PlannerOptions resume = *options;
    resume.first_iteration = at;
    start = absl::Now();
    auto loaded = scheduler::Planner::LoadState(resume, *bytes);
    if (!loaded.ok()) Fail(loaded.status());
    const double load_ms = MsSince(start);
    // The baseline: a planner replayed over the iterations before it.
    start = absl::Now();
    auto replayed = scheduler::Planner::Create(*options);
    if (!replayed.ok()) Fail(replayed.status());
    plan_range(replayed->get(), 0, at);
    const double replay_ms = MsSince(start);
    // The loaded, replayed and running planners plan the next iteration alike.
    uint64_t digests[3];
    scheduler::Planner* planners[3] = {running->get(), loaded->get(), replayed->get()};
    for (int k = 0; k < 3; ++k) {
      plan_range(planners[k], at, at + 1);
      digests[k] = scheduler::PlanDigest(plan, scheduler::kPlanDigestSeed);
    }
    planned = at + 1;
    const bool same = digests[0] == digests[1] && digests[1] == digests[2];
    std::printf(
        "checkpoint after %5llu iterations: state %.1f MB, saved in %.0f ms, loaded in %.0f ms; "
        "replay %.0f ms (%.2f ms/iteration); load/replay %.3f; next plan %s\n",
        static_cast<unsigned long long>(at), bytes->size() / 1e6, save_ms, load_ms, replay_ms,
        replay_ms / at, load_ms / replay_ms, same ? "identical" : "DIFFERENT");
    if (!same) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace herald

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return herald::Main();
}
