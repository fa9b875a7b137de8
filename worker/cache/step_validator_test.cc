#include "worker/cache/step_validator.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"

namespace herald::worker {
namespace {

constexpr int kTables = 7;

// Every table: keys 10 and 11 fetched into slots 0 and 1, owned, one
// sample each.
plan::Step GoodStep() {
  plan::Step step;
  step.num_samples = 2;
  step.plan.resize(kTables);
  step.samples.resize(kTables);
  for (int t = 0; t < kTables; ++t) {
    step.plan[t].fetch.keys = {Key(10), Key(11)};
    step.plan[t].fetch.slots = {0, 1};
    step.plan[t].owned_slots = {0, 1};
    step.samples[t].offsets = {0, 1, 2};
    step.samples[t].slots = {0, 1};
  }
  return step;
}

TEST(StepValidator, TablesCheckedInParallelReportTheFirstFailingTable) {
  CpuDevice device;
  EmbeddingCache cache(&device, std::vector<CacheTableConfig>(kTables, {4, {}, 8}));
  for (int threads : {1, 2, 3, 8}) {
    SCOPED_TRACE(threads);
    StepValidator checker(threads);
    plan::Step step = GoodStep();
    EXPECT_TRUE(checker.Check(cache, step).ok());
    step.samples[5].slots[1] = 3;  // neither owned nor shared
    step.plan[2].fetch.slots[0] = 9;
    absl::Status s = checker.Check(cache, step);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("plan for table 2: fetch.slots[0]: slot 9 out of range"),
              std::string::npos)
        << s;
    step.plan[2].fetch.slots[0] = 0;
    s = checker.Check(cache, step);
    EXPECT_NE(s.message().find("samples of table 5: slots[1] = 3"), std::string::npos) << s;
    step.samples[5].slots[1] = 1;
    EXPECT_TRUE(checker.Check(cache, step).ok());  // the sets were left clean
  }
}

}  // namespace
}  // namespace herald::worker
