#include "worker/collectives/row_packet.h"

#include <vector>

#include "gtest/gtest.h"

namespace herald::worker {
namespace {

TEST(RowPacketTest, RowsAndGradientsReadBackInTheOrderWritten) {
  RowPacketWriter w;
  const std::vector<float> row = {1.5f, -2.0f, 3.25f};
  const std::vector<float> grad = {0.5f, 0.25f};
  w.AddRow(7, row);
  w.AddFloats(grad);
  w.AddRow(9, {});
  EXPECT_EQ(w.size(),
            RowPacketWriter::RowBytes(3) + 2 * sizeof(float) + RowPacketWriter::RowBytes(0));
  const std::string bytes = w.Take();
  EXPECT_EQ(w.size(), 0u);

  RowPacketReader r(bytes, 2);
  uint64_t version = 0;
  std::vector<float> got_row(3), got_grad(2);
  ASSERT_TRUE(r.ReadRow(&version, absl::MakeSpan(got_row)).ok());
  EXPECT_EQ(version, 7u);
  EXPECT_EQ(got_row, row);
  ASSERT_TRUE(r.ReadFloats(absl::MakeSpan(got_grad)).ok());
  EXPECT_EQ(got_grad, grad);
  ASSERT_TRUE(r.ReadRow(&version, {}).ok());
  EXPECT_EQ(version, 9u);
  EXPECT_TRUE(r.Finish().ok());
}

TEST(RowPacketTest, AShortPacketIsRefusedNamingThePeerAndOffset) {
  RowPacketWriter w;
  w.AddRow(1, std::vector<float>{1, 2});
  std::string bytes = w.Take();
  bytes.resize(bytes.size() - 1);
  RowPacketReader r(bytes, 3);
  uint64_t version;
  std::vector<float> row(2);
  absl::Status s = r.ReadRow(&version, absl::MakeSpan(row));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("rank 3"), std::string::npos) << s;
  EXPECT_NE(s.message().find("a row's values at byte 8"), std::string::npos) << s;
}

TEST(RowPacketTest, BytesLeftOverAreRefused) {
  RowPacketWriter w;
  w.AddFloats(std::vector<float>{1, 2, 3});
  const std::string bytes = w.Take();
  RowPacketReader r(bytes, 1);
  std::vector<float> two(2);
  ASSERT_TRUE(r.ReadFloats(absl::MakeSpan(two)).ok());
  absl::Status s = r.Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("4 bytes past"), std::string::npos) << s;
}

}  // namespace
}  // namespace herald::worker
