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

// A CSV described by a schema file: per-column figures, then the same
// through its binary version 2 conversion (no strings left to compare).
TEST(HeraldctlData, StatsPerColumnOfACsvAndItsBinaryVersion2) {
  std::string dir = MakeTestDir("ctl_schema");
  std::ofstream(dir + "/shop.schema.txt") << R"pb(
    columns { name: "click" role: COLUMN_LABEL }
    columns { name: "rating" role: COLUMN_LABEL label: LABEL_REGRESSION }
    columns { name: "age" role: COLUMN_DENSE missing: 30 }
    columns { name: "user" role: COLUMN_SPARSE ids: IDS_STRING }
    columns { name: "genres" role: COLUMN_SPARSE multi_hot_separator: "|" table: "tags" }
  )pb";
  std::ofstream(dir + "/shop.csv") << "user,genres,age,rating,click\n"
                                      "ann,a|b|c,41,4.5,1\n"
                                      "bob,,,-2,0\n"
                                      "ann,f,20,1,0\n"
                                      "cy,1|2,,0.5,1\n";
  Result stats = RunHeraldctl(
      dir, {"data", "stats", dir + "/shop.csv", "--schema=" + dir + "/shop.schema.txt", "--json"});
  ASSERT_EQ(stats.code, 0) << stats.output;
  for (const char* want : {
           "\"rows\":4",
           "\"positives\":2",
           "{\"name\":\"click\",\"kind\":\"binary\",\"mean\":0.5,\"min\":0,\"max\":1}",
           "{\"name\":\"rating\",\"kind\":\"regression\",\"mean\":1,\"min\":-2,\"max\":4.5}",
           "{\"name\":\"age\",\"missing\":2,\"mean\":30.5,\"min\":20,\"max\":41}",
           "{\"name\":\"user\",\"table\":\"user\",\"missing\":0,\"ids\":4,\"multi_valued\":0,"
           "\"max_ids\":1,\"string_collisions\":0}",
           "{\"name\":\"genres\",\"table\":\"tags\",\"missing\":1,\"ids\":6,\"multi_valued\":2,"
           "\"max_ids\":3,\"string_collisions\":-1}",
       }) {
    EXPECT_NE(stats.output.find(want), std::string::npos) << want << "\n" << stats.output;
  }
  Result text = RunHeraldctl(
      dir, {"data", "stats", dir + "/shop.csv", "--schema=" + dir + "/shop.schema.txt"});
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("genres"), std::string::npos) << text.output;

  Result to_bin =
      RunHeraldctl(dir, {"convert", dir + "/shop.csv", "--schema=" + dir + "/shop.schema.txt",
                         "--out=" + dir + "/s.bin"});
  ASSERT_EQ(to_bin.code, 0) << to_bin.output;
  Result bin_stats = RunHeraldctl(dir, {"data", "stats", dir + "/s.bin", "--json"});
  ASSERT_EQ(bin_stats.code, 0) << bin_stats.output;
  EXPECT_NE(bin_stats.output.find("\"max_ids\":1,\"string_collisions\":-1}"), std::string::npos)
      << bin_stats.output;
  EXPECT_NE(bin_stats.output.find("\"name\":\"age\",\"missing\":2"), std::string::npos)
      << bin_stats.output;

  // gen-data makes rows of the schema that read back without a malformed
  // line, the same for the same seed.
  for (const char* name : {"g1.csv", "g2.csv"}) {
    Result gen = RunHeraldctl(dir, {"gen-data", "--schema=" + dir + "/shop.schema.txt",
                                    "--rows=3000", "--seed=4", "--out=" + dir + "/" + name});
    ASSERT_EQ(gen.code, 0) << gen.output;
  }
  EXPECT_EQ(Slurp(dir + "/g1.csv"), Slurp(dir + "/g2.csv"));
  Result gen_stats = RunHeraldctl(
      dir, {"data", "stats", dir + "/g1.csv", "--schema=" + dir + "/shop.schema.txt", "--json"});
  ASSERT_EQ(gen_stats.code, 0) << gen_stats.output;
  EXPECT_NE(gen_stats.output.find("\"rows\":3000,"), std::string::npos) << gen_stats.output;
  EXPECT_NE(gen_stats.output.find("\"malformed\":0,"), std::string::npos) << gen_stats.output;

  // A schema that is not one, and a format that takes none, are refused.
  std::ofstream(dir + "/bad.schema.txt") << "columns { nme: \"x\" }\n";
  Result bad = RunHeraldctl(
      dir, {"data", "stats", dir + "/shop.csv", "--schema=" + dir + "/bad.schema.txt"});
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("not a DataSchemaSpec: line 1:"), std::string::npos) << bad.output;
  Result tsv = RunHeraldctl(dir, {"data", "stats", dir + "/shop.csv", "--format=tsv",
                                  "--schema=" + dir + "/shop.schema.txt"});
  EXPECT_NE(tsv.code, 0);
  EXPECT_NE(tsv.output.find("--schema reads delimited text"), std::string::npos) << tsv.output;
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
