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

TEST(StepUpload, EveryPartArrivesWhole64ByteAlignedAndAStepReplacesThePrevious) {
  CpuDevice device;
  StepUpload upload(&device);
  const std::vector<float> labels = {1.0f, 0.0f, 0.5f};
  const std::vector<uint32_t> offsets = {0, 2, 3, 7}, empty, slots = {9, 8, 7, 6, 5, 4, 3};
  upload.Clear();
  const size_t l = upload.Add(labels);
  const size_t o = upload.Add(offsets);
  const size_t e = upload.Add(empty);
  const size_t s = upload.Add(slots);
  upload.Upload();
  std::vector<float> got_labels(labels.size());
  device.CopyToHost(upload.floats(l), got_labels.data(), labels.size() * sizeof(float));
  EXPECT_EQ(got_labels, labels);
  EXPECT_EQ(Read(device, upload.words(o), offsets.size()), offsets);
  EXPECT_EQ(Read(device, upload.words(s), slots.size()), slots);
  for (size_t part : {l, o, e, s}) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(upload.words(part)) % 64, 0u) << part;
  }
  EXPECT_GE(upload.bytes(), (labels.size() + offsets.size() + slots.size()) * 4);

  // The next step: a bigger part grows the buffers; parts are numbered anew.
  std::vector<uint32_t> big(100000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint32_t>(i * 7);
  upload.Clear();
  const size_t first = upload.Add(slots);
  const size_t second = upload.Add(big);
  upload.Upload();
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(Read(device, upload.words(first), slots.size()), slots);
  EXPECT_EQ(Read(device, upload.words(second), big.size()), big);
}

}  // namespace
}  // namespace herald::worker
