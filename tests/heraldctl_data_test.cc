// heraldctl gen-data / data stats / convert, run as a user would.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/harness/heraldctl.h"
#include "tests/harness/process.h"

namespace herald {
namespace {

using testing::MakeTestDir;

using Result = testing::CommandResult;
using testing::RunHeraldctl;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(HeraldctlData, GenerateStatsAndConvertRoundTrip) {
  std::string dir = MakeTestDir("ctl");
  Result gen = RunHeraldctl(dir, {"gen-data", "--rows=20000", "--seed=5", "--out=" + dir + "/a.tsv",
                                  "--cardinality_scale=0.01"});
  ASSERT_EQ(gen.code, 0) << gen.output;
  EXPECT_NE(gen.output.find("wrote 20000 rows"), std::string::npos);
  EXPECT_NE(gen.output.find("teacher AUC"), std::string::npos);

  Result stats = RunHeraldctl(dir, {"data", "stats", dir + "/a.tsv", "--json"});
  ASSERT_EQ(stats.code, 0) << stats.output;
  EXPECT_NE(stats.output.find("\"rows\":20000"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("\"malformed\":0"), std::string::npos);
  EXPECT_NE(stats.output.find("\"table\":25"), std::string::npos);

  // TSV -> binary -> TSV reproduces the file byte for byte.
  Result to_bin = RunHeraldctl(dir, {"convert", dir + "/a.tsv", "--out=" + dir + "/a.bin"});
  ASSERT_EQ(to_bin.code, 0) << to_bin.output;
  Result to_tsv =
      RunHeraldctl(dir, {"convert", dir + "/a.bin", "--to=tsv", "--out=" + dir + "/b.tsv"});
  ASSERT_EQ(to_tsv.code, 0) << to_tsv.output;
  EXPECT_EQ(Slurp(dir + "/a.tsv"), Slurp(dir + "/b.tsv"));
  EXPECT_LT(Slurp(dir + "/a.bin").size(), Slurp(dir + "/a.tsv").size());

  // Binary stats agree with TSV stats.
  Result bin_stats = RunHeraldctl(dir, {"data", "stats", dir + "/a.bin", "--json"});
  ASSERT_EQ(bin_stats.code, 0);
  EXPECT_EQ(bin_stats.output, stats.output);

  // Same seed, same bytes.
  Result again =
      RunHeraldctl(dir, {"gen-data", "--rows=20000", "--seed=5", "--out=" + dir + "/c.tsv",
                         "--cardinality_scale=0.01", "--threads=1"});
  ASSERT_EQ(again.code, 0);
  EXPECT_EQ(Slurp(dir + "/a.tsv"), Slurp(dir + "/c.tsv"));
}

TEST(HeraldctlData, MalformedLinesAreListedOrFailTheConversion) {
  std::string dir = MakeTestDir("bad");
  std::string good = "1";
  for (int i = 0; i < 13; ++i) good += "\t1";
  for (int i = 0; i < 26; ++i) good += "\tab";
  std::ofstream(dir + "/bad.tsv") << good << "\n"
                                  << "0\tnope\n"
                                  << good << "\n";
  Result stats = RunHeraldctl(dir, {"data", "stats", dir + "/bad.tsv"});
  ASSERT_EQ(stats.code, 0) << stats.output;
  EXPECT_NE(stats.output.find("rows 2"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find(dir + "/bad.tsv:2: dense feature I1: not an integer 'nope'"),
            std::string::npos)
      << stats.output;

  Result strict = RunHeraldctl(dir, {"convert", dir + "/bad.tsv", "--out=" + dir + "/o.bin"});
  EXPECT_EQ(strict.code, 2) << strict.output;
  EXPECT_NE(strict.output.find("bad.tsv:2:"), std::string::npos) << strict.output;
  EXPECT_FALSE(std::ifstream(dir + "/o.bin").good()) << "no output on failure";

  Result lenient = RunHeraldctl(
      dir, {"convert", dir + "/bad.tsv", "--out=" + dir + "/o.bin", "--skip_malformed"});
  EXPECT_EQ(lenient.code, 0) << lenient.output;
  EXPECT_NE(lenient.output.find("converted 2 rows"), std::string::npos);
  EXPECT_NE(lenient.output.find("1 malformed skipped"), std::string::npos);
}

TEST(HeraldctlData, UsageErrorsExitTwo) {
  std::string dir = MakeTestDir("usage");
  EXPECT_EQ(RunHeraldctl(dir, {}).code, 2);
  EXPECT_EQ(RunHeraldctl(dir, {"frobnicate"}).code, 2);
  Result no_rows = RunHeraldctl(dir, {"gen-data", "--out=" + dir + "/x"});
  EXPECT_EQ(no_rows.code, 2);
  EXPECT_NE(no_rows.output.find("--rows"), std::string::npos);
  Result bad_corr =
      RunHeraldctl(dir, {"gen-data", "--rows=1", "--out=" + dir + "/x", "--correlation=maybe"});
  EXPECT_EQ(bad_corr.code, 2);
  EXPECT_NE(bad_corr.output.find("'maybe'"), std::string::npos);
  Result missing = RunHeraldctl(dir, {"data", "stats", dir + "/nope.tsv"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("no such input"), std::string::npos);
}

}  // namespace
}  // namespace herald
