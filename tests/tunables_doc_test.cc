// docs/configuration.md's table of tunables is the list in
// common/tunables_def.h: every name, default and meaning, in order.

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/tunables.h"
#include "gtest/gtest.h"
#include "tests/harness/process.h"

namespace herald {
namespace {

constexpr char kBegin[] = "<!-- tunables: begin (generated from common/tunables_def.h) -->\n";
constexpr char kEnd[] = "<!-- tunables: end -->\n";

std::string ExpectedTable() {
  std::string table = "| tunable | default | meaning |\n| --- | --- | --- |\n";
  for (const tunables::Tunable& t : tunables::kAll) {
    absl::StrAppend(&table, "| `", t.name, "` | ", t.value, " | ", t.meaning, " |\n");
  }
  return table;
}

TEST(TunablesDoc, ConfigurationTableIsTheTunablesList) {
  std::ifstream in(testing::RunfilePath("docs/configuration.md"));
  ASSERT_TRUE(in) << "docs/configuration.md not in the runfiles";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t begin = doc.find(kBegin);
  const size_t end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "missing marker: " << kBegin;
  ASSERT_NE(end, std::string::npos) << "missing marker: " << kEnd;
  const std::string table =
      doc.substr(begin + sizeof(kBegin) - 1, end - begin - sizeof(kBegin) + 1);
  EXPECT_EQ(table, ExpectedTable()) << "replace the table in docs/configuration.md with:\n"
                                    << ExpectedTable();
}

// A default of 0 only where the description says what 0 means ("0: ...").
TEST(TunablesDoc, NamesAreUniqueAndDefaultsPositive) {
  for (size_t i = 0; i < std::size(tunables::kAll); ++i) {
    if (std::string(tunables::kAll[i].meaning).find("0: ") != std::string::npos) {
      EXPECT_GE(tunables::kAll[i].value, 0) << tunables::kAll[i].name;
    } else {
      EXPECT_GT(tunables::kAll[i].value, 0) << tunables::kAll[i].name;
    }
    for (size_t j = 0; j < i; ++j) {
      EXPECT_NE(std::string(tunables::kAll[i].name), tunables::kAll[j].name);
    }
  }
}

}  // namespace
}  // namespace herald
