#include "scheduler/service/job_history.h"

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

proto::HistoryPoint Point(uint64_t iteration) {
  proto::HistoryPoint p;
  p.set_iteration(iteration);
  p.set_loss(1.0 / (iteration + 1));
  return p;
}

TEST(JobHistory, KeepsEveryIterationUpToItsCapacity) {
  JobHistory h(8);
  for (uint64_t i = 0; i < 8; ++i) h.Add(Point(i));
  ASSERT_EQ(h.points().size(), 8u);
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(h.points()[i].iteration(), i);
  EXPECT_EQ(h.stride(), 1u);
}

TEST(JobHistory, AnyLengthFitsEvenlySpacedAndRecent) {
  JobHistory h(8);
  for (uint64_t i = 0; i < 1000; ++i) {
    h.Add(Point(i));
    ASSERT_LE(h.points().size(), 8u) << "after iteration " << i;
    // Evenly spaced from 0, the newest at most one stride behind.
    for (size_t k = 0; k < h.points().size(); ++k) {
      EXPECT_EQ(h.points()[k].iteration(), k * h.stride());
    }
    EXPECT_LT(i - h.points().back().iteration(), h.stride());
  }
  EXPECT_EQ(h.stride(), 128u);                           // 1000 iterations in at most 8 points
  EXPECT_EQ(h.points()[3].loss(), 1.0 / (3 * 128 + 1));  // each point is its iteration's
}

}  // namespace
}  // namespace herald::scheduler
