#include "ps_server/wire/row_wire.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace herald::ps::wire {
namespace {

TEST(RowWire, RequestsDecodeInPlaceAsTheyWereEncoded) {
  const std::vector<Key> k0 = {1, 2, 3}, k1 = {9};
  const std::vector<float> g0 = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, rows = {1, 2, 3};
  const std::vector<uint64_t> versions = {7};
  FetchIn fetch{12, 3, false, {{0, k0}, {3, k1}}};
  ucx::AlignedBuffer f = EncodeFetch("job-7", 0xfeedbeef01ull, fetch);
  auto df = DecodeRequest(f);
  ASSERT_TRUE(df.ok()) << df.status();
  EXPECT_EQ(df->kind, Kind::kFetch);
  EXPECT_EQ(df->job_id, "job-7");
  EXPECT_EQ(df->run_id, 0xfeedbeef01ull);
  EXPECT_EQ(df->fetch.iteration, 12u);
  EXPECT_EQ(df->fetch.early, 3u);  // the distance
  EXPECT_FALSE(df->fetch.read_only);
  ASSERT_EQ(df->fetch.blocks.size(), 2u);
  EXPECT_EQ(df->fetch.blocks[1].table, 3u);
  EXPECT_EQ(std::vector<Key>(df->fetch.blocks[0].keys.begin(), df->fetch.blocks[0].keys.end()), k0);
  // In place: the keys are read from the message itself.
  EXPECT_GE(reinterpret_cast<const char*>(df->fetch.blocks[0].keys.data()), f.data());
  EXPECT_LT(reinterpret_cast<const char*>(df->fetch.blocks[0].keys.data()), f.data() + f.size());

  PushIn push{4, 1, {{2, 2, k0, g0}}};
  ucx::AlignedBuffer p = EncodePush("j", 3, push);
  auto dp = DecodeRequest(p);
  ASSERT_TRUE(dp.ok()) << dp.status();
  EXPECT_EQ(dp->kind, Kind::kPush);
  EXPECT_EQ(dp->push.worker, 1u);
  EXPECT_EQ(dp->run_id, 3u);
  EXPECT_EQ(dp->push.blocks[0].dim, 2u);
  EXPECT_EQ(std::vector<float>(dp->push.blocks[0].grads.begin(), dp->push.blocks[0].grads.end()),
            g0);

  WriteBackIn wb{5, 2, {{1, 3, k1, rows, versions}}};
  auto dw = DecodeRequest(EncodeWriteBack("j", 4, wb));
  ASSERT_TRUE(dw.ok()) << dw.status();
  EXPECT_EQ(dw->run_id, 4u);
  EXPECT_EQ(dw->write_back.blocks[0].row_floats, 3u);
  EXPECT_EQ(dw->write_back.blocks[0].versions[0], 7u);
  EXPECT_EQ(dw->write_back.blocks[0].rows[2], 3.0f);
}

TEST(RowWire, AFetchReplyIsWrittenInPlaceAndReadBack) {
  FetchReplyBuilder builder({0, 5}, {2, 1}, {3, 4});
  const float r0[6] = {1, 2, 3, 4, 5, 6}, r1[4] = {7, 8, 9, 10};
  const uint64_t v0[2] = {1, 2}, v1[1] = {3};
  std::memcpy(builder.Out(0).rows, r0, sizeof(r0));
  std::memcpy(builder.Out(0).versions, v0, sizeof(v0));
  std::memcpy(builder.Out(1).rows, r1, sizeof(r1));
  std::memcpy(builder.Out(1).versions, v1, sizeof(v1));
  ucx::AlignedBuffer reply = builder.Finish();
  auto views = DecodeFetchReply(reply, {2, 1});
  ASSERT_TRUE(views.ok()) << views.status();
  EXPECT_EQ((*views)[0].row_floats, 3u);
  EXPECT_EQ((*views)[0].rows[5], 6.0f);
  EXPECT_EQ((*views)[1].table, 5u);
  EXPECT_EQ((*views)[1].rows[3], 10.0f);
  EXPECT_EQ((*views)[1].versions[0], 3u);
  const absl::Status wrong = DecodeFetchReply(reply, {2, 2}).status();
  EXPECT_EQ(wrong.code(), absl::StatusCode::kDataLoss) << wrong;
}

TEST(RowWire, EveryTruncationAndCorruptionIsRefusedNamingWhatAndWhere) {
  const std::vector<Key> keys = {1, 2};
  const std::vector<float> grads = {1, 2, 3, 4};
  ucx::AlignedBuffer good = EncodePush("job", 1, PushIn{1, 0, {{0, 2, keys, grads}}});
  for (size_t n = 0; n < good.size(); ++n) {
    ucx::AlignedBuffer cut = ucx::AlignedBuffer::CopyOf(good.data(), n);
    const absl::Status s = DecodeRequest(cut).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "cut at " << n;
    EXPECT_NE(s.message().find("row message:"), std::string::npos) << s;
  }
  auto corrupt = [&](size_t offset, const void* value, size_t bytes) {
    ucx::AlignedBuffer b = ucx::AlignedBuffer::CopyOf(good.data(), good.size());
    std::memcpy(b.data() + offset, value, bytes);
    return DecodeRequest(b).status();
  };
  const uint32_t zero = 0, many = 1u << 20;
  const uint16_t kind = 9, version = 1;
  EXPECT_NE(corrupt(0, &zero, 4).message().find("magic"), std::string::npos);
  EXPECT_NE(corrupt(4, &version, 2).message().find("version 1 (this server reads 2)"),
            std::string::npos);
  EXPECT_NE(corrupt(6, &kind, 2).message().find("kind 9"), std::string::npos);
  EXPECT_NE(corrupt(24, &many, 4).message().find("blocks"), std::string::npos);
  EXPECT_NE(corrupt(28, &many, 4).message().find("job id"), std::string::npos);
  // The block's width (after the 40-byte header and the padded job id).
  const absl::Status width = corrupt(40 + 8 + 4, &zero, 4);
  EXPECT_NE(width.message().find("block 0: width 0"), std::string::npos) << width;
  EXPECT_NE(width.message().find("at byte 48"), std::string::npos) << width;
  const uint64_t huge = uint64_t{1} << 62;
  EXPECT_NE(corrupt(40 + 8 + 8, &huge, 8).message().find("keys at byte"), std::string::npos);
  // A fetch's early distance: beyond the protocol's, or without the flag.
  ucx::AlignedBuffer fetch = EncodeFetch("job", 1, FetchIn{2, 1, false, {{0, keys}}});
  for (const uint32_t flags : {1u | (4u << 8), 2u << 8}) {
    ucx::AlignedBuffer b = ucx::AlignedBuffer::CopyOf(fetch.data(), fetch.size());
    std::memcpy(b.data() + 20, &flags, 4);
    const absl::Status s = DecodeRequest(b).status();
    EXPECT_NE(s.message().find("early distance"), std::string::npos) << s;
    EXPECT_NE(s.message().find("at byte 20"), std::string::npos) << s;
  }
  ucx::AlignedBuffer longer(good.size() + 8);
  std::memcpy(longer.data(), good.data(), good.size());
  std::memset(longer.data() + good.size(), 0, 8);
  EXPECT_NE(DecodeRequest(longer).status().message().find("trailing bytes"), std::string::npos);
}

}  // namespace
}  // namespace herald::ps::wire
