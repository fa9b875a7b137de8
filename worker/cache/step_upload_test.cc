#include "worker/cache/step_upload.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"

namespace herald::worker {
namespace {

std::vector<uint32_t> Read(Device& device, const uint32_t* at, size_t n) {
  std::vector<uint32_t> out(n);
  device.CopyToHost(at, out.data(), n * sizeof(uint32_t));
  return out;
}

std::vector<float> ReadFloats(Device& device, const float* at, size_t n) {
  std::vector<float> out(n);
  device.CopyToHost(at, out.data(), n * sizeof(float));
  return out;
}

// A step of two tables whose lists all differ with `seed`.
plan::Step MakeStep(uint32_t seed, size_t slots_per_table) {
  plan::Step step;
  step.num_samples = 3;
  step.labels = {1.0f, 0.0f, 0.5f + static_cast<float>(seed)};
  step.dense = {0.25f * static_cast<float>(seed), 2.0f};
  step.samples.resize(2);
  step.plan.resize(2);
  for (uint32_t t = 0; t < 2; ++t) {
    step.samples[t].offsets = {0, 1, 2, static_cast<uint32_t>(slots_per_table)};
    for (size_t i = 0; i < slots_per_table; ++i) {
      step.samples[t].slots.push_back(static_cast<uint32_t>(seed * 1000 + t * 100 + i));
    }
    step.plan[t].owned_slots = {seed, t};
  }
  return step;
}

void ExpectOnDevice(Device& device, const StepUpload& upload, const plan::Step& step) {
  EXPECT_EQ(ReadFloats(device, upload.labels(), step.labels.size()), step.labels);
  EXPECT_EQ(ReadFloats(device, upload.dense(), step.dense.size()), step.dense);
  for (size_t t = 0; t < step.samples.size(); ++t) {
    EXPECT_EQ(Read(device, upload.offsets(t), step.samples[t].offsets.size()),
              step.samples[t].offsets);
    EXPECT_EQ(Read(device, upload.slots(t), step.samples[t].slots.size()), step.samples[t].slots);
    EXPECT_EQ(Read(device, upload.owned(t), step.plan[t].owned_slots.size()),
              step.plan[t].owned_slots);
    for (const void* p :
         {static_cast<const void*>(upload.offsets(t)), static_cast<const void*>(upload.slots(t))}) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    }
  }
}

TEST(StepUpload, EveryListArrivesWholeWhetherStagedAheadOrNot) {
  CpuDevice device;
  StepUpload upload(&device);
  const plan::Step first = MakeStep(1, 7);
  upload.Upload(first);  // not staged: packed now
  ExpectOnDevice(device, upload, first);

  // Staged ahead, then moved (as a worker does with the next step): the
  // packed lists are used.
  plan::Step second = MakeStep(2, 100000);  // grows the buffers
  upload.Stage(second);
  EXPECT_NE(second.staged_as, 0u);
  plan::Step moved = std::move(second);
  upload.Settled();
  upload.Upload(moved);
  ExpectOnDevice(device, upload, moved);

  // A step staged and then not run: the next one is packed on its own.
  plan::Step skipped = MakeStep(3, 5);
  upload.Stage(skipped);
  const plan::Step third = MakeStep(4, 9);
  upload.Upload(third);
  ExpectOnDevice(device, upload, third);
  EXPECT_GE(upload.bytes(), (3 + 2 + 2 * (4 + 9 + 2)) * 4u);
}

// A step staged by one StepUpload (one executor) is packed anew by another:
// stage numbers are unique in the process.
TEST(StepUpload, AStepStagedByAnotherUploadIsPackedAnew) {
  CpuDevice device;
  StepUpload a(&device), b(&device);
  const plan::Step first = MakeStep(5, 4);
  b.Upload(first);  // b's buffers hold `first`
  const plan::Step second = MakeStep(6, 8);
  a.Stage(second);
  b.Upload(second);
  ExpectOnDevice(device, b, second);
}

}  // namespace
}  // namespace herald::worker
