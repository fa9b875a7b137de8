#include "common/version.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(Version, IsTheVersionFile) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  std::ifstream file(std::string(srcdir) + "/herald/VERSION");
  ASSERT_TRUE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(Version(), std::string(absl::StripAsciiWhitespace(text.str())));
}

TEST(Version, LineNamesProgramVersionCommitAndWireVersion) {
  const std::string line = VersionLine("herald_ps");
  EXPECT_TRUE(absl::StartsWith(line, std::string("herald_ps ") + Version() + " (commit "));
  EXPECT_TRUE(absl::StrContains(line, Commit()));
  EXPECT_TRUE(absl::EndsWith(line, ", wire version " + std::to_string(kWireVersion) + ")"));
}

TEST(Version, SpeaksOnlyItsOwnWireVersion) {
  EXPECT_TRUE(SpeaksWireVersion(kWireVersion));
  EXPECT_FALSE(SpeaksWireVersion(0));  // a build from before wire versions
  EXPECT_FALSE(SpeaksWireVersion(kWireVersion + 1));
}

}  // namespace
}  // namespace herald
