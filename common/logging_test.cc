#include "common/logging.h"

#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(InitLogging, AcceptsKnownLevelsAndRejectsUnknown) {
  EXPECT_TRUE(InitLogging("ps", 1, "debug").ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);
  EXPECT_TRUE(InitLogging("worker", -1, "warn").ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::warn);
  absl::Status bad = InitLogging("ps", 0, "loud");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("loud"), std::string::npos);
}

}  // namespace
}  // namespace herald
