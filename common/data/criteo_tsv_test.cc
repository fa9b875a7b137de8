#include "common/data/criteo_tsv.h"

#include <string>

#include "common/data/generator.h"
#include "common/data/test_util.h"
#include "gtest/gtest.h"

namespace herald::data {
namespace {

using testing::DiffBlocks;
using testing::TempDir;
using testing::WriteFile;

constexpr DataSchema kSmall{2, 3};

ReaderOptions SmallOptions(OnMalformed policy = OnMalformed::kSkip) {
  ReaderOptions o;
  o.schema = kSmall;
  o.on_malformed = policy;
  return o;
}

TEST(ParseCriteoLine, ParsesValuesAndMissingFields) {
  SampleBlock b(kSmall);
  ASSERT_TRUE(ParseCriteoLine("1\t5\t\t68fd1e64\t\tDEADbeef", &b).ok());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b.labels[0], 1.0f);
  EXPECT_EQ(b.Dense(0, 0), 5);
  EXPECT_FALSE(b.DenseMissing(0, 0));
  EXPECT_TRUE(b.DenseMissing(0, 1));
  ASSERT_EQ(b.Keys(0, 0).size(), 1u);
  EXPECT_EQ(b.Keys(0, 0)[0], 0x68fd1e64u);
  EXPECT_TRUE(b.Keys(0, 1).empty());
  EXPECT_EQ(b.Keys(0, 2)[0], 0xdeadbeefu);
}

TEST(ParseCriteoLine, MultiHotIdsAndNegativeDenseAndCrlf) {
  SampleBlock b(kSmall);
  ASSERT_TRUE(ParseCriteoLine("0\t-3\t2147483647\ta,b,ffffffffffffffff\t1\t\r", &b).ok());
  EXPECT_EQ(b.Dense(0, 0), -3);
  EXPECT_EQ(b.Dense(0, 1), 2147483647);
  auto k = b.Keys(0, 0);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0], 0xau);
  EXPECT_EQ(k[2], ~uint64_t{0});
  EXPECT_TRUE(b.Keys(0, 2).empty());
}

struct BadLine {
  const char* line;
  const char* reason;
};

class ParseCriteoLineRejects : public ::testing::TestWithParam<BadLine> {};

TEST_P(ParseCriteoLineRejects, WithPreciseReasonAndUnchangedBlock) {
  SampleBlock b(kSmall);
  ASSERT_TRUE(ParseCriteoLine("1\t1\t2\ta\tb\tc", &b).ok());
  absl::Status s = ParseCriteoLine(GetParam().line, &b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(GetParam().reason), std::string::npos) << s.message();
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(b.keys.size(), 3u);
  EXPECT_EQ(b.offsets.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, ParseCriteoLineRejects,
    ::testing::Values(
        BadLine{"1\t1\t2\ta\tb", "expected 6 fields, found 5"},
        BadLine{"1\t1\t2\ta\tb\tc\td", "found more"}, BadLine{"", "label: not a number"},
        BadLine{"x\t1\t2\ta\tb\tc", "label: not a number 'x'"},
        BadLine{"2\t1\t2\ta\tb\tc", "label: '2' is outside [0, 1]"},
        BadLine{"1\t1x\t2\ta\tb\tc", "dense feature I1: not an integer '1x'"},
        BadLine{"1\t1\t-\ta\tb\tc", "dense feature I2: not an integer"},
        BadLine{"1\t1\t99999999999\ta\tb\tc", "dense feature I2: '99999999999' does not fit"},
        BadLine{"1\t1\t2\tzz\tb\tc", "categorical feature C1: not a hex id 'zz'"},
        BadLine{"1\t1\t2\ta\tb\t12345678901234567", "categorical feature C3: not a hex id of 1-16"},
        BadLine{"1\t1\t2\ta,\tb\tc", "categorical feature C1: trailing ','"},
        BadLine{"1\t1\t2\ta,,b\tb\tc", "categorical feature C1"}));

TEST(CriteoTsvReader, SkipPolicyCountsAndLocatesMalformedLines) {
  std::string data = "1\t1\t2\ta\tb\tc\n0\tx\t2\ta\tb\tc\n0\t1\t2\ta\tb\n1\t\t\t\t\t\n";
  CriteoTsvReader reader({"mem.tsv"}, MemoryOpener({data}), SmallOptions());
  SampleBlock b(kSmall);
  auto n = reader.Read(100, &b);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 2u);
  EXPECT_EQ(reader.malformed().count(), 2u);
  ASSERT_EQ(reader.malformed().kept().size(), 2u);
  EXPECT_EQ(reader.malformed().kept()[0].ToString(),
            "mem.tsv:2: dense feature I1: not an integer 'x'");
  EXPECT_EQ(reader.malformed().kept()[1].ToString(), "mem.tsv:3: expected 6 fields, found 5");
  EXPECT_EQ(*reader.Read(100, &b), 0u);
}

TEST(CriteoTsvReader, FailPolicyNamesFileAndLine) {
  std::string data = "1\t1\t2\ta\tb\tc\n1\t1\t2\tq\tb\tc\n";
  CriteoTsvReader reader({"day_0"}, MemoryOpener({data}), SmallOptions(OnMalformed::kFail));
  SampleBlock b(kSmall);
  auto n = reader.Read(100, &b);
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(n.status().message(), "day_0:2: categorical feature C1: not a hex id 'q'");
}

TEST(CriteoTsvReader, ReadsAcrossInputsWithUnterminatedLastLineAndRespectsMax) {
  std::string a = "1\t1\t2\ta\tb\tc\n0\t3\t4\td\te\tf";  // no final newline
  std::string c = "1\t5\t6\t1\t2\t3\n";
  CriteoTsvReader reader({"a", "c"}, MemoryOpener({a, c}), SmallOptions());
  SampleBlock b(kSmall);
  EXPECT_EQ(*reader.Read(2, &b), 2u);
  EXPECT_EQ(*reader.Read(2, &b), 1u);
  EXPECT_EQ(*reader.Read(2, &b), 0u);
  EXPECT_EQ(b.Dense(1, 1), 4);
  EXPECT_EQ(b.Keys(1, 2)[0], 0xfu);
  EXPECT_EQ(b.Dense(2, 0), 5);
  EXPECT_EQ(reader.malformed().count(), 0u);
}

// A position taken after any number of samples (malformed lines skipped,
// a buffer smaller than some lines, two inputs, one without a final
// newline) and given to a fresh reader reads the same samples from there on
// and locates later malformed lines by the same line numbers.
TEST(CriteoTsvReader, APositionResumesAFreshReaderAtTheSameSample) {
  std::string ids;
  for (int i = 0; i < 40; ++i) ids += (i ? "," : "") + std::to_string(i + 1);
  const std::string a =
      "1\t1\t2\ta\tb\tc\n0\tx\t2\ta\tb\tc\n0\t3\t4\t" + ids + "\te\tf\n1\t5\t6\t1\t2\t3\n";
  const std::string c = "0\t7\t8\t9\ta\tb\n1\tbad\n1\t9\t9\t9\t9\t9";
  ReaderOptions o = SmallOptions();
  o.buffer_bytes = 32;
  for (size_t taken = 0; taken <= 5; ++taken) {
    CriteoTsvReader first({"a", "c"}, MemoryOpener({a, c}), o);
    SampleBlock head(kSmall);
    ASSERT_EQ(*first.Read(taken, &head), taken);
    auto position = first.Position();
    ASSERT_TRUE(position.ok()) << position.status();
    const uint64_t malformed_before = first.malformed().count();
    CriteoTsvReader resumed({"a", "c"}, MemoryOpener({a, c}), o);
    absl::Status s = resumed.Seek(*position);
    ASSERT_TRUE(s.ok()) << "after " << taken << ": " << s;
    SampleBlock x(kSmall), y(kSmall);
    while (*first.Read(2, &x) > 0) {
    }
    while (*resumed.Read(2, &y) > 0) {
    }
    EXPECT_EQ(DiffBlocks(x, y), "") << "after " << taken;
    EXPECT_EQ(resumed.malformed().count(), first.malformed().count() - malformed_before);
    if (resumed.malformed().count() > 0) {
      EXPECT_EQ(resumed.malformed().kept().back().ToString(),
                first.malformed().kept().back().ToString());
    }
  }
  CriteoTsvReader fresh({"a", "c"}, MemoryOpener({a, c}), o);
  EXPECT_EQ(fresh.Seek({1, 0, 5, 1}).code(), absl::StatusCode::kDataLoss);  // mid-line
  EXPECT_EQ(fresh.Seek({1, 2, 0, 0}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CriteoTsvReader, LinesLongerThanTheBufferAreRead) {
  std::string ids;
  for (int i = 0; i < 500; ++i) ids += (i ? "," : "") + std::to_string(i + 1);
  std::string data = "1\t1\t2\t" + ids + "\tb\tc\n0\t1\t2\ta\tb\tc\n";
  ReaderOptions o = SmallOptions();
  o.buffer_bytes = 64;
  CriteoTsvReader reader({"long"}, MemoryOpener({data}), o);
  SampleBlock b(kSmall);
  EXPECT_EQ(*reader.Read(10, &b), 2u);
  EXPECT_EQ(b.Keys(0, 0).size(), 500u);
  EXPECT_EQ(b.Keys(0, 0)[499], 0x500u);
}

TEST(CriteoTsvReader, OpensDirectoriesInNameOrderFromRealFiles) {
  TempDir dir;
  WriteFile(dir.File("part-1.tsv"), "0\t2\t2\ta\tb\tc\n");
  WriteFile(dir.File("part-0.tsv"), "1\t1\t1\ta\tb\tc\n");
  WriteFile(dir.File(".hidden"), "garbage\n");
  auto reader = CriteoTsvReader::Open({dir.path()}, SmallOptions(OnMalformed::kFail));
  ASSERT_TRUE(reader.ok()) << reader.status();
  SampleBlock b(kSmall);
  EXPECT_EQ(*(*reader)->Read(10, &b), 2u);
  EXPECT_EQ(b.Dense(0, 0), 1);
  EXPECT_EQ(b.Dense(1, 0), 2);
  auto missing = CriteoTsvReader::Open({dir.File("nope")}, SmallOptions());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(CriteoTsv, GeneratedDataRoundTripsThroughText) {
  GeneratorOptions go;
  go.cardinality_scale = 0.001;
  SyntheticGenerator gen(go);
  SampleBlock original(gen.schema());
  gen.Generate(0, 500, &original);
  std::string text;
  for (size_t s = 0; s < original.size(); ++s) AppendCriteoLine(original, s, &text);
  ReaderOptions o;
  o.on_malformed = OnMalformed::kFail;
  CriteoTsvReader reader({"gen"}, MemoryOpener({text}), o);
  SampleBlock parsed(gen.schema());
  ASSERT_EQ(*reader.Read(1000, &parsed), 500u);
  EXPECT_EQ(DiffBlocks(original, parsed), "");
}

}  // namespace
}  // namespace herald::data
