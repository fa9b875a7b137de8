#include "common/byte_size.h"

#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(ParseByteSize, NumbersAndBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576u);
  EXPECT_EQ(*ParseByteSize("512K"), 512u << 10);
  EXPECT_EQ(*ParseByteSize("64m"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("64MiB"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("64MB"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("4G"), 4ull << 30);
  EXPECT_EQ(*ParseByteSize(" 2T "), 2ull << 40);
}

TEST(ParseByteSize, AnythingElseIsRefusedQuotingIt) {
  for (const char* bad :
       {"", "M", "-1", "1.5G", "12X", "G12", "99999999999999999999", "20000000T"}) {
    auto r = ParseByteSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("\"") + bad + "\""), std::string::npos);
  }
}

}  // namespace
}  // namespace herald
