#include <thread>

#include "gtest/gtest.h"
#include "scheduler/membership/kv_rendezvous.h"
#include "scheduler/membership/node_registry.h"

namespace herald::scheduler {
namespace {

proto::RegisterRequest Worker(const std::string& address, int rank = -1) {
  proto::RegisterRequest r;
  r.set_role(proto::NODE_ROLE_WORKER);
  r.set_address(address);
  r.set_requested_rank(rank);
  return r;
}

TEST(NodeRegistry, RanksLivenessAndReplacement) {
  absl::Time now = absl::UnixEpoch();
  NodeRegistry registry(absl::Seconds(10), [&] { return now; });
  auto a = registry.Register(Worker("h:1"));
  auto b = registry.Register(Worker("h:2"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->rank, 0u);
  EXPECT_EQ(b->rank, 1u);
  // A rank held by a live node is refused, naming the holder.
  auto clash = registry.Register(Worker("h:3", 1));
  EXPECT_TRUE(absl::IsAlreadyExists(clash.status()));
  EXPECT_NE(clash.status().message().find("h:2"), std::string::npos);

  now += absl::Seconds(6);
  EXPECT_EQ(registry.Get(a->node_id)->heartbeats, 0u);
  EXPECT_TRUE(registry.Heartbeat(a->node_id, "h:1"));
  EXPECT_EQ(registry.Get(a->node_id)->heartbeats, 1u);  // counted (recovery placement)
  now += absl::Seconds(6);                              // b silent for 12 s: dead; a heard 6 s ago
  EXPECT_TRUE(registry.IsAlive(a->node_id));
  EXPECT_FALSE(registry.IsAlive(b->node_id));
  ASSERT_EQ(registry.Alive(proto::NODE_ROLE_WORKER).size(), 1u);
  // The dead node's rank goes to the next node; the old id is forgotten.
  auto c = registry.Register(Worker("h:3"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->rank, 1u);
  EXPECT_FALSE(registry.Heartbeat(b->node_id, "h:2"));
  // A node registering again from its address replaces its entry.
  auto a2 = registry.Register(Worker("h:1"));
  ASSERT_TRUE(a2.ok());
  EXPECT_EQ(a2->rank, 0u);
  EXPECT_NE(a2->node_id, a->node_id);
  EXPECT_EQ(registry.List().size(), 2u);
  EXPECT_TRUE(absl::IsInvalidArgument(registry.Register(Worker("no-port")).status()));
}

TEST(NodeRegistry, AnIdHandedOutAgainAfterARestartIsNotTheStaleNodes) {
  // Before a scheduler restart worker h:1 held id I; the restarted one
  // (ids counted afresh) gave I to h:2, which registered first. h:1's
  // heartbeats with its stale id must send it to register again, and keep
  // h:2 alive no longer than h:2's own heartbeats do.
  absl::Time now = absl::UnixEpoch();
  NodeRegistry before(absl::Seconds(10), [&] { return now; });
  auto stale = before.Register(Worker("h:1"));
  ASSERT_TRUE(stale.ok());
  NodeRegistry restarted(absl::Seconds(10), [&] { return now; });
  auto taken = restarted.Register(Worker("h:2"));
  ASSERT_TRUE(taken.ok());
  ASSERT_EQ(taken->node_id, stale->node_id);  // the same id, another node
  now += absl::Seconds(6);
  EXPECT_FALSE(restarted.Heartbeat(stale->node_id, "h:1"));
  EXPECT_EQ(restarted.Get(taken->node_id)->heartbeats, 0u);
  now += absl::Seconds(6);
  EXPECT_FALSE(restarted.IsAlive(taken->node_id));  // h:2 silent for 12 s
  EXPECT_TRUE(restarted.Heartbeat(taken->node_id, "h:2"));
  EXPECT_TRUE(restarted.IsAlive(taken->node_id));
  auto again = restarted.Register(Worker("h:1"));
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->node_id, taken->node_id);
}

TEST(KvRendezvous, GetWaitsForTheKeysAndNamesTheMissingOnes) {
  KvRendezvous kv;
  std::thread setter([&] {
    ASSERT_TRUE(kv.Set("job", "a", "1").ok());
    ASSERT_TRUE(kv.Set("job", "b", "2").ok());
  });
  auto got = kv.Get("job", {"a", "b"}, absl::Seconds(30));
  setter.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, (std::vector<std::string>{"1", "2"}));
  auto missing = kv.Get("job", {"a", "zz"}, absl::Milliseconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(missing.status()));
  EXPECT_NE(missing.status().message().find("zz"), std::string::npos);
  EXPECT_EQ(missing.status().message().find("a,"), std::string::npos);
  kv.DropScope("job");
  EXPECT_FALSE(kv.Get("job", {"a"}, absl::ZeroDuration()).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(
      kv.Set("job", "big", std::string(KvRendezvous::kMaxValueBytes + 1, 'x'))));
}

}  // namespace
}  // namespace herald::scheduler
