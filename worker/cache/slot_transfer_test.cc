#include "worker/cache/slot_transfer.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/device/cpu_device.h"

namespace herald::worker {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

// A device array of `slots` rows of `stride` floats, row s holding
// 100·s + 0, 1, … .
DeviceArray<float> NumberedRows(Device* device, int slots, int stride) {
  std::vector<float> host(static_cast<size_t>(slots) * stride);
  for (int s = 0; s < slots; ++s) {
    for (int c = 0; c < stride; ++c) host[s * stride + c] = static_cast<float>(100 * s + c);
  }
  DeviceArray<float> rows(device, host.size());
  rows.CopyFromHost(host);
  return rows;
}

TEST(SlotTransferTest, ReadsEveryTablesListedRowsInSlotOrderAndLeavesTheListsUploaded) {
  CpuDevice device;
  SlotTransfer transfer(&device);
  DeviceArray<float> a = NumberedRows(&device, 5, 4);
  DeviceArray<float> b = NumberedRows(&device, 3, 2);
  const std::vector<uint32_t> from_a = {4, 0};
  const std::vector<uint32_t> from_b = {2};
  const std::vector<std::vector<float>> read =
      transfer.Read({{a.data(), 4, &from_a, 3}, {b.data(), 2, &from_b, 2}});
  ASSERT_EQ(read.size(), 2u);
  // The first `width` floats of each listed row, in the list's order.
  EXPECT_THAT(read[0], ElementsAre(400, 401, 402, 0, 1, 2));
  EXPECT_THAT(read[1], ElementsAre(200, 201));
  std::vector<uint32_t> uploaded(3);
  device.CopyToHost(transfer.uploaded_slots(), uploaded.data(), 3 * sizeof(uint32_t));
  EXPECT_THAT(uploaded, ElementsAre(4, 0, 2));
}

TEST(SlotTransferTest, WritesRowsIntoTheirSlotsOnlyAndReadsThemBack) {
  CpuDevice device;
  SlotTransfer transfer(&device);
  DeviceArray<float> rows = NumberedRows(&device, 4, 3);
  // Two floats into slots 3 and 1: the third float of each row stays.
  transfer.Write({-1, -2, -3, -4}, {3, 1}, /*width=*/2, /*stride=*/3, rows.data());
  EXPECT_THAT(rows.ToHost(),
              ElementsAreArray<float>({0, 1, 2, -3, -4, 102, 200, 201, 202, -1, -2, 302}));
  EXPECT_THAT(transfer.Read(rows.data(), 3, {1, 3}, 3), ElementsAre(-3, -4, 102, -1, -2, 302));
}

TEST(SlotTransferTest, WritesOfSeveralTablesLandInTheirOwnRowsAndLeaveTheListsUploaded) {
  CpuDevice device;
  SlotTransfer transfer(&device);
  DeviceArray<float> a = NumberedRows(&device, 3, 3);
  DeviceArray<float> b = NumberedRows(&device, 2, 2);
  // Table a twice (whole rows into slot 2, the first float only into slot
  // 0, as hand-offs and served copies are placed), table b once.
  const std::vector<uint32_t> a_whole = {2}, a_first = {0}, b_slots = {1, 0};
  const std::vector<float> a_rows = {-1, -2, -3}, a_floats = {-4}, b_rows = {-5, -6, -7, -8};
  transfer.Write({{a.data(), 3, &a_whole, 3, &a_rows},
                  {a.data(), 3, &a_first, 1, &a_floats},
                  {b.data(), 2, &b_slots, 2, &b_rows}});
  EXPECT_THAT(a.ToHost(), ElementsAreArray<float>({-4, 1, 2, 100, 101, 102, -1, -2, -3}));
  EXPECT_THAT(b.ToHost(), ElementsAreArray<float>({-7, -8, -5, -6}));
  std::vector<uint32_t> uploaded(4);
  device.CopyToHost(transfer.uploaded_slots(), uploaded.data(), 4 * sizeof(uint32_t));
  EXPECT_THAT(uploaded, ElementsAre(2, 0, 1, 0));
  transfer.Write(std::vector<SlotTransfer::WriteRows>{});  // nothing to write: nothing happens
  EXPECT_THAT(b.ToHost(), ElementsAreArray<float>({-7, -8, -5, -6}));
}

TEST(SlotTransferTest, AStartedReadHasTheRowsAsTheyWereWhenItStarted) {
  CpuDevice device;
  SlotTransfer transfer(&device);
  DeviceArray<float> rows = NumberedRows(&device, 3, 2);
  const std::vector<uint32_t> slots = {2, 1};
  SlotTransfer::StartedRead read = transfer.StartRead({{rows.data(), 2, &slots, 2}});
  // Work issued after the start (here: writing the same slots) does not
  // reach the rows read.
  transfer.Write({-1, -1, -1, -1}, slots, 2, 2, rows.data());
  const std::vector<std::vector<float>> got = transfer.FinishRead(read);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_THAT(got[0], ElementsAre(200, 201, 100, 101));
  EXPECT_EQ(read.lane, -1);  // finished
}

TEST(SlotTransferTest, TwoReadsAreInFlightAtOnceAndAThirdAbandonsTheOlder) {
  CpuDevice device;
  SlotTransfer transfer(&device);
  DeviceArray<float> rows = NumberedRows(&device, 4, 1);
  const std::vector<uint32_t> first = {0}, second = {1}, third = {2}, fourth = {3};
  SlotTransfer::StartedRead a = transfer.StartRead({{rows.data(), 1, &first, 1}});
  SlotTransfer::StartedRead b = transfer.StartRead({{rows.data(), 1, &second, 1}});
  EXPECT_THAT(transfer.FinishRead(b)[0], ElementsAre(100));
  SlotTransfer::StartedRead c = transfer.StartRead({{rows.data(), 1, &third, 1}});
  EXPECT_THAT(transfer.FinishRead(a)[0], ElementsAre(0));
  EXPECT_THAT(transfer.FinishRead(c)[0], ElementsAre(200));
  // Three started, none finished: the first is abandoned, the others not.
  SlotTransfer::StartedRead d = transfer.StartRead({{rows.data(), 1, &first, 1}});
  SlotTransfer::StartedRead e = transfer.StartRead({{rows.data(), 1, &second, 1}});
  SlotTransfer::StartedRead f = transfer.StartRead({{rows.data(), 1, &fourth, 1}});
  EXPECT_THAT(transfer.FinishRead(e)[0], ElementsAre(100));
  EXPECT_THAT(transfer.FinishRead(f)[0], ElementsAre(300));
  EXPECT_DEATH(transfer.FinishRead(d), "finished twice or after it was abandoned");
}

TEST(SlotTransferTest, ReadingNoSlotsGivesEmptyRowsForEveryRead) {
  CpuDevice device;
  SlotTransfer transfer(&device);
  DeviceArray<float> rows = NumberedRows(&device, 2, 2);
  const std::vector<uint32_t> none;
  const std::vector<std::vector<float>> read =
      transfer.Read({{rows.data(), 2, &none, 2}, {rows.data(), 2, &none, 1}});
  ASSERT_EQ(read.size(), 2u);
  EXPECT_THAT(read[0], IsEmpty());
  EXPECT_THAT(read[1], IsEmpty());
}

}  // namespace
}  // namespace herald::worker
