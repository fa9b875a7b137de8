#include "common/data/binary_key_stats.h"

#include <cstring>

#include "common/crc32.h"
#include "common/data/binary_format.h"
#include "common/data/generator.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

using testing::ReadFileOrDie;
using testing::TempDir;
using testing::WriteFile;

// Generated samples whose feature 0 has a key of its own in every sample:
// each file's count of it is exact (below the 65 536-key limit) and the
// merged count is not; the other features stay exact.
SampleBlock Generated(uint64_t first, size_t n) {
  GeneratorOptions go;
  go.cardinality_scale = 0.05;
  SyntheticGenerator gen(go);
  SampleBlock b(gen.schema());
  gen.Generate(first, n, &b);
  for (size_t s = 0; s < n; ++s) {
    b.keys[b.offsets[s * b.schema.num_sparse]] = (first + s) * 0x9E3779B97F4A7C15ull;
  }
  return b;
}

void Write(const std::string& path, const SampleBlock& b) {
  auto w = BinaryWriter::Create(path, b.schema, 1000);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Write(b).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

// Two files' stored statistics, merged, count what one pass over both files'
// samples counts, feature by feature: exact keys, registers and most ids.
TEST(BinaryKeyStats, StoredStatisticsMergeToAPassOverTheSamples) {
  TempDir dir;
  const SampleBlock a = Generated(0, 60000), b = Generated(60000, 50000);
  Write(dir.File("a.bin"), a);
  Write(dir.File("b.bin"), b);
  KeyStats pass = EmptyKeyStats(a.schema.num_sparse);
  pass.Add(a);
  pass.Add(b);

  auto sa = ReadBinaryKeyStats(dir.File("a.bin"));
  auto sb = ReadBinaryKeyStats(dir.File("b.bin"));
  ASSERT_TRUE(sa.ok() && sb.ok()) << sa.status() << sb.status();
  ASSERT_TRUE(sa->has_value() && sb->has_value());
  KeyStats merged = EmptyKeyStats(a.schema.num_sparse);
  merged.Merge(**sa);
  merged.Merge(**sb);
  size_t exact = 0, estimated = 0;
  for (size_t f = 0; f < pass.features.size(); ++f) {
    const FeatureKeyStats &want = pass.features[f], &got = merged.features[f];
    EXPECT_EQ(got.max_ids, want.max_ids) << f;
    EXPECT_EQ(got.distinct.exact(), want.distinct.exact()) << f;
    EXPECT_EQ(got.distinct.Estimate(), want.distinct.Estimate()) << f;
    EXPECT_EQ(got.distinct.registers(), want.distinct.registers()) << f;
    (want.distinct.exact() ? exact : estimated) += 1;
  }
  EXPECT_GT(exact, 0u);
  EXPECT_GT(estimated, 0u);
}

// The statistics follow the end marker, where readers of the samples stop:
// a file reads as the samples alone, as builds before them read it.
TEST(BinaryKeyStats, AFileWithoutThemHasNoneAndADamagedSectionIsDataLoss) {
  TempDir dir;
  const SampleBlock samples = Generated(0, 2000);
  Write(dir.File("a.bin"), samples);
  std::string bytes = ReadFileOrDie(dir.File("a.bin"));
  uint64_t at = 0;
  std::memcpy(&at, bytes.data() + bytes.size() - kKeyStatsTrailerBytes + 8, 8);
  ASSERT_GT(at, 32u);
  ASSERT_EQ(bytes.substr(at - 32, 4), "END1");
  auto reader = BinaryReader::Open({dir.File("a.bin")}, ReaderOptions{});
  ASSERT_TRUE(reader.ok()) << reader.status();
  SampleBlock back;
  while (*(*reader)->Read(999, &back) > 0) {
  }
  EXPECT_EQ(testing::DiffBlocks(samples, back), "");

  // A file from before the statistics ends at its end marker.
  WriteFile(dir.File("old.bin"), bytes.substr(0, at));
  auto none = ReadBinaryKeyStats(dir.File("old.bin"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  // Not a binary file at all (say, compressed): none, the reader tells.
  WriteFile(dir.File("other.bin"), "not a binary sample file, longer than an end marker");
  auto other = ReadBinaryKeyStats(dir.File("other.bin"));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());

  // Cut short: the trailer no longer finds them.
  std::string cut = bytes;
  cut.erase(at + 40, 8);
  WriteFile(dir.File("cut.bin"), cut);
  EXPECT_EQ(ReadBinaryKeyStats(dir.File("cut.bin")).status().code(), absl::StatusCode::kDataLoss);

  // One byte of the statistics' payload changed.
  std::string damaged = bytes;
  damaged[at + kKeyStatsHeaderBytes + 3] ^= 1;
  WriteFile(dir.File("damaged.bin"), damaged);
  auto loss = ReadBinaryKeyStats(dir.File("damaged.bin"));
  EXPECT_EQ(loss.status().code(), absl::StatusCode::kDataLoss) << loss.status();
  EXPECT_NE(loss.status().message().find("damaged.bin"), std::string::npos);
}

}  // namespace
}  // namespace herald::data
