// Planner::SaveState / LoadState: a planner loaded from the bytes of
// another plans what that one plans, bit for bit, under every policy and
// option that shapes its state; bytes that are not a planner's state, or
// options that are not the saved planner's, are refused by name.

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/planner/plan_digest.h"
#include "scheduler/planner/planner.h"

namespace herald::scheduler {
namespace {

// Skewed keys over 3 tables: caches fill, rows move, some rows are trained
// by many workers (the directory's wide entries with many workers).
std::vector<data::KeyBatch> Batches(size_t n, uint32_t samples) {
  std::mt19937_64 rng(5);
  std::vector<data::KeyBatch> batches(n);
  for (data::KeyBatch& b : batches) {
    b.num_samples = samples;
    b.tables.resize(3);
    for (uint32_t s = 0; s < b.num_samples; ++s) {
      b.labels.push_back(0.0f);
      for (uint32_t t = 0; t < 3; ++t) {
        for (int k = 0; k < 2; ++k) {
          const uint64_t r = rng() % 1500;
          b.tables[t].keys.push_back(t == 2 ? r % 7 : r * r / 3000);
        }
        b.tables[t].offsets.push_back(static_cast<uint32_t>(b.tables[t].keys.size()));
      }
    }
  }
  return batches;
}

struct Config {
  std::string name;
  PlannerOptions options;
  uint32_t samples = 64;
  bool read_two_ahead = true;  // as a job plans (PlanInto with the batch after the next)
};

std::vector<Config> Configs() {
  auto base = [](const std::string& policy) {
    PlannerOptions o;
    o.policy = *PolicyByName(policy);
    o.num_workers = 3;
    o.capacity.assign(3, 80);
    o.slots.assign(3, 400);
    o.seed = 9;
    return o;
  };
  std::vector<Config> configs;
  configs.push_back({"herald", base("herald")});
  configs.push_back({"herald, one batch ahead", base("herald"), 64, false});
  configs.push_back({"vanilla", base("vanilla")});
  configs.push_back({"nocache", base("nocache")});
  Config lfu{"herald lfu, 2 passes, flush every 4", base("herald")};
  lfu.options.eviction = EvictionKind::kLfu;
  lfu.options.allocation_passes = 2;
  lfu.options.flush_every = {4};
  configs.push_back(lfu);
  Config options{"herald handoff serve init_on_worker", base("herald")};
  options.options.handoff = true;
  options.options.serve = true;
  options.options.init_on_worker = true;
  options.options.trained_filter_bits = 1 << 12;
  configs.push_back(options);
  // A filter that stays sparse (saved as its nonzero words) beside the
  // small one above, which fills up (saved whole).
  Config sparse_filter{"herald init_on_worker, a large filter", base("herald")};
  sparse_filter.options.init_on_worker = true;
  sparse_filter.options.trained_filter_bits = 1 << 22;
  configs.push_back(sparse_filter);
  Config adaptive{"herald-adaptive", base("herald-adaptive")};
  adaptive.options.adaptive.top_k = 1;
  adaptive.options.adaptive.profile_every = 3;
  adaptive.options.adaptive.sketch_width = 256;
  configs.push_back(adaptive);
  Config many{"herald, 70 workers", base("herald")};
  many.options.num_workers = 70;
  many.samples = 140;
  configs.push_back(many);
  return configs;
}

// Plans batches[from..] with `planner`, returning each plan's digest.
std::vector<uint64_t> PlanFrom(Planner* planner, const Config& c,
                               const std::vector<data::KeyBatch>& batches, size_t from, size_t to) {
  std::vector<uint64_t> digests;
  IterationPlan plan;
  for (size_t i = from; i < to; ++i) {
    const data::KeyBatch* next = i + 1 < batches.size() ? &batches[i + 1] : nullptr;
    const data::KeyBatch* after =
        c.read_two_ahead && i + 2 < batches.size() ? &batches[i + 2] : nullptr;
    const absl::Status planned = planner->PlanInto(batches[i], next, after, &plan);
    EXPECT_TRUE(planned.ok()) << "iteration " << i << ": " << planned;
    if (!planned.ok()) break;
    digests.push_back(PlanDigest(plan, kPlanDigestSeed));
  }
  return digests;
}

TEST(PlannerState, ALoadedPlannerPlansAsTheSavedOneBitForBit) {
  constexpr size_t kBatches = 16;
  for (const Config& c : Configs()) {
    SCOPED_TRACE(c.name);
    const std::vector<data::KeyBatch> batches = Batches(kBatches, c.samples);
    auto original = Planner::Create(c.options);
    ASSERT_TRUE(original.ok()) << original.status();
    const std::vector<uint64_t> want = PlanFrom(original->get(), c, batches, 0, kBatches);
    ASSERT_EQ(want.size(), kBatches);
    // Saved after each iteration (and before the first), loaded, and planned
    // on to the end: the same plans.
    auto planner = Planner::Create(c.options);
    ASSERT_TRUE(planner.ok());
    for (size_t at = 0; at < kBatches; ++at) {
      auto bytes = (*planner)->SaveState();
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      PlannerOptions options = c.options;
      options.first_iteration = at;
      options.threads = 1 + at % 3;  // plans are the same bits for any number
      auto loaded = Planner::LoadState(options, *bytes);
      ASSERT_TRUE(loaded.ok()) << "after " << at << " iterations: " << loaded.status();
      EXPECT_EQ((*loaded)->iteration(), at);
      const std::vector<uint64_t> got = PlanFrom(loaded->get(), c, batches, at, kBatches);
      EXPECT_EQ(got, std::vector<uint64_t>(want.begin() + at, want.end()))
          << "loaded after " << at << " iterations";
      PlanFrom(planner->get(), c, batches, at, at + 1);
    }
  }
}

// The state of a warm planner: a few iterations of the first config.
struct Saved {
  PlannerOptions options;
  std::string bytes;
};
Saved WarmState() {
  const Config c = Configs().front();
  const std::vector<data::KeyBatch> batches = Batches(8, c.samples);
  auto planner = Planner::Create(c.options);
  PlanFrom(planner->get(), c, batches, 0, 5);
  Saved saved{c.options, *(*planner)->SaveState()};
  saved.options.first_iteration = 5;
  return saved;
}

TEST(PlannerState, OptionsThatShapeTheStateMustBeTheSavedOnes) {
  const Saved saved = WarmState();
  PlannerOptions slots = saved.options;
  slots.slots.assign(3, 401);
  auto loaded = Planner::LoadState(slots, saved.bytes);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("slots = [400, 400, 400]"), std::string::npos)
      << loaded.status();
  PlannerOptions seed = saved.options;
  seed.seed = 10;
  EXPECT_NE(Planner::LoadState(seed, saved.bytes).status().message().find("seed"),
            std::string::npos);
  PlannerOptions iteration = saved.options;
  iteration.first_iteration = 4;
  loaded = Planner::LoadState(iteration, saved.bytes);
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("saved before iteration 5"), std::string::npos)
      << loaded.status();
}

TEST(PlannerState, BytesThatAreNotAPlannersStateAreRefusedNamingTheField) {
  const Saved saved = WarmState();
  ASSERT_TRUE(Planner::LoadState(saved.options, saved.bytes).ok());
  // Every cut is refused; none reads past the end.
  for (size_t cut = 0; cut < saved.bytes.size(); cut += 1 + cut / 50) {
    auto loaded = Planner::LoadState(saved.options, std::string_view(saved.bytes).substr(0, cut));
    ASSERT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << "cut at " << cut;
    ASSERT_NE(loaded.status().message().find("planner state: "), std::string::npos);
  }
  std::string magic = saved.bytes;
  magic[0] = 'X';
  EXPECT_EQ(Planner::LoadState(saved.options, magic).status().message(),
            "planner state: magic: not a planner's state");
  std::string version = saved.bytes;
  version[8] = 7;
  EXPECT_NE(Planner::LoadState(saved.options, version).status().message().find("version: 7"),
            std::string::npos);
  EXPECT_NE(Planner::LoadState(saved.options, saved.bytes + "x")
                .status()
                .message()
                .find("1 bytes after the state"),
            std::string::npos);
  // A length no stream could hold is refused before anything is allocated.
  std::string length = saved.bytes;
  const size_t options_end = 8 + 4 + 4 + 8;  // header, then the first option's length
  for (size_t i = 0; i < 8; ++i) length[options_end + i] = '\xff';
  EXPECT_NE(Planner::LoadState(saved.options, length).status().message().find("bytes left"),
            std::string::npos);
}

}  // namespace
}  // namespace herald::scheduler
