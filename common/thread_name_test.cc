#include "common/thread_name.h"

#include <thread>

#include "common/cached_thread_pool.h"
#include "common/thread_pool.h"
#include "gtest/gtest.h"

namespace herald {
namespace {

TEST(ThreadNameTest, NamesTheCallingThreadTruncatedToWhatLinuxKeeps) {
  std::string seen;
  std::thread t([&] {
    NameThisThread("a-name-longer-than-fifteen-bytes");
    seen = ThisThreadName();
  });
  t.join();
  EXPECT_EQ(seen, "a-name-longer-t");
}

TEST(ThreadNameTest, PoolThreadsCarryThePoolsNameAndTheirIndex) {
  ThreadPool pool(2, "commit");
  std::string first, second;
  pool.ParallelFor(2, 1, [&](size_t begin, size_t) {
    if (begin == 0) return;  // the caller's chunk
    first = ThisThreadName();
  });
  EXPECT_TRUE(first == "commit0" || first == "commit1") << first;
  CachedThreadPool cached("ucx-serve");
  cached.Run([&] { second = ThisThreadName(); });
  cached.WaitUntilIdle();
  EXPECT_EQ(second, "ucx-serve");
}

}  // namespace
}  // namespace herald
