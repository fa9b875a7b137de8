#include "scheduler/planner/network_cost.h"

#include "gtest/gtest.h"

namespace herald::scheduler {
namespace {

// 1 Gb/s = 125,000 bytes per ms; rows of dim 4 with 4 floats of state:
// a full row is 8 + 8 + 32 = 48 bytes, a gradient 8 + 16 = 24 bytes.
ClusterModel Model() {
  ClusterModel m;
  m.link_gbps = 1;
  m.dim = 4;
  m.row_floats = 8;
  return m;
}

TEST(NetworkCost, ThePsNicIsTheBottleneckOfManyWorkersFetches) {
  PlanCounts c;
  c.fetched = 125'000;  // 6 MB per worker
  const std::vector<PlanCounts> four(4, c);
  const ClusterModel m = Model();
  // The PS sends 4 × 6 MB through one NIC: 192 ms; each worker receives 48 ms.
  EXPECT_DOUBLE_EQ(PredictIteration(m, four).fetch_ms, 192);
  ClusterModel two_ps = m;
  two_ps.ps_hosts = 2;
  EXPECT_DOUBLE_EQ(PredictIteration(two_ps, four).fetch_ms, 96);
  ClusterModel eight_ps = m;
  eight_ps.ps_hosts = 8;  // now each worker's own NIC bounds it
  EXPECT_DOUBLE_EQ(PredictIteration(eight_ps, four).fetch_ms, 48);
}

TEST(NetworkCost, EveryPhaseCountsItsBytesAndRoundTrips) {
  ClusterModel m = Model();
  m.latency_us = 500;  // a round trip: 1 ms
  m.dense_params = 125'000;
  m.compute_ms_per_sample = 0.01;
  m.samples_per_worker = 100;
  PlanCounts a, b;
  a.pushed = 5'000;               // 120,000 bytes
  a.written_back = 2'500;         // 120,000 bytes
  a.handoffs = 2'500;             // 120,000 bytes
  a.transferred = 2'500 + 5'000;  // + 5,000 served values: 120,000 bytes
  b.pushed = 5'000;
  const PhaseTimes t = PredictIteration(m, {a, b});
  EXPECT_DOUBLE_EQ(t.fetch_ms, 0);                       // nothing fetched: no round trip either
  EXPECT_DOUBLE_EQ(t.push_ms, 240'000 / 125'000.0 + 1);  // both through the one PS NIC
  EXPECT_DOUBLE_EQ(t.writeback_ms, 120'000 / 125'000.0 + 1);
  EXPECT_DOUBLE_EQ(t.exchange_ms, 240'000 / 125'000.0 + 1);
  // Ring of 2: 2 × 1/2 × 4 × 125,000 bytes each way, 1 step of 2 one-way latencies.
  EXPECT_DOUBLE_EQ(t.allreduce_ms, 500'000 / 125'000.0 + 1);
  EXPECT_DOUBLE_EQ(t.compute_ms, 1);
  // Beside the push, write-back and exchange: a's NIC sends 480,000 bytes of
  // them and 500,000 of the all-reduce, 8 ms and one round trip in all,
  // longer than either alone (5 and 7.8 ms).
  const double after = t.push_ms + t.writeback_ms + t.exchange_ms;
  EXPECT_DOUBLE_EQ(t.overlapped_ms, t.allreduce_ms + after - (980'000 / 125'000.0 + 1));
  EXPECT_DOUBLE_EQ(t.total_ms(), t.fetch_ms + t.compute_ms + 980'000 / 125'000.0 + 1);
  EXPECT_DOUBLE_EQ(t.transfer_ms(), t.push_ms + t.writeback_ms + t.exchange_ms);
}

// Four workers pushing through one PS NIC: the push takes 4× a worker's
// bytes there, and the all-reduce, on the workers' NICs, hides behind it.
TEST(NetworkCost, TheAllReduceHidesBehindAPushThatWaitsOnThePsNic) {
  ClusterModel m = Model();
  m.dense_params = 10'000;  // 2 × 3/4 × 4 × 10,000 = 60,000 bytes each way
  PlanCounts c;
  c.pushed = 5'000;  // 120,000 bytes a worker, 480,000 at the PS NIC
  const PhaseTimes t = PredictIteration(m, {c, c, c, c});
  EXPECT_DOUBLE_EQ(t.push_ms, 480'000 / 125'000.0);
  EXPECT_DOUBLE_EQ(t.allreduce_ms, 60'000 / 125'000.0);
  EXPECT_NEAR(t.overlapped_ms, t.allreduce_ms, 1e-9);
  EXPECT_NEAR(t.total_ms(), t.push_ms, 1e-9);
}

TEST(NetworkCost, AHostProcessingRateAddsToTheWireTime) {
  PlanCounts c;
  c.pushed = 5'000;  // 120,000 bytes
  ClusterModel m = Model();
  m.host_gbps = 4;  // 500,000 bytes per ms
  EXPECT_DOUBLE_EQ(PredictIteration(m, {c}).push_ms, 120'000 / 125'000.0 + 120'000 / 500'000.0);
}

TEST(NetworkCost, OneWorkerHasNoAllReduce) {
  ClusterModel m = Model();
  m.dense_params = 1'000'000;
  EXPECT_EQ(PredictIteration(m, {PlanCounts()}).allreduce_ms, 0);
}

}  // namespace
}  // namespace herald::scheduler
