#include "plan/plan_codec.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace herald::plan {
namespace {

// Fills every column a list's kind has with `n` distinct entries.
struct Fill {
  size_t n;
  uint32_t next = 1;
  void operator()(absl::string_view, std::vector<uint32_t>& slots, uint8_t) {
    for (size_t i = 0; i < n; ++i) slots.push_back(next++);
  }
  void operator()(absl::string_view, SlotRows& rows, uint8_t) {
    for (size_t i = 0; i < n; ++i) rows.slots.push_back(next++), rows.keys.push_back(next++);
  }
  void operator()(absl::string_view, FetchRows& rows, uint8_t) {
    for (size_t i = 0; i < n; ++i) {
      rows.slots.push_back(next++), rows.keys.push_back(next++), rows.early.push_back(i % 2);
    }
  }
  void operator()(absl::string_view, PeerRows& rows, uint8_t columns) {
    for (size_t i = 0; i < n; ++i) {
      rows.keys.push_back(next++);
      if (columns & kSlots) rows.slots.push_back(next++);
      if (columns & kPeers) rows.peers.push_back(next++);
      if (columns & kFlags) rows.served.push_back(i % 2);
    }
  }
};

// Every column of every list, flattened, in ForEachList order.
struct Flatten {
  std::vector<uint64_t> out;
  template <typename T>
  void Add(const std::vector<T>& column) {
    out.push_back(column.size());
    out.insert(out.end(), column.begin(), column.end());
  }
  void operator()(absl::string_view, const std::vector<uint32_t>& slots, uint8_t) { Add(slots); }
  void operator()(absl::string_view, const SlotRows& r, uint8_t) { Add(r.slots), Add(r.keys); }
  void operator()(absl::string_view, const FetchRows& r, uint8_t) {
    Add(r.slots), Add(r.keys), Add(r.early);
  }
  void operator()(absl::string_view, const PeerRows& r, uint8_t) {
    Add(r.slots), Add(r.keys), Add(r.peers), Add(r.served);
  }
};

std::vector<uint64_t> Flat(const TablePlan& plan) {
  Flatten f;
  ForEachList(plan, f);
  return f.out;
}

TablePlan Full(size_t n) {
  TablePlan plan;
  ForEachList(plan, Fill{n});
  return plan;
}

TEST(PlanCodec, EveryListOfEveryKindRoundTrips) {
  std::vector<TablePlan> tables = {Full(3), TablePlan{}, Full(1)};
  ASSERT_TRUE(CheckShape(tables[0]).ok()) << CheckShape(tables[0]);
  proto::CachePlan wire;
  EncodeCachePlan(tables, &wire);
  auto back = DecodeCachePlan(wire, 3);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 3u);
  for (size_t t = 0; t < 3; ++t) EXPECT_EQ(Flat((*back)[t]), Flat(tables[t])) << "table " << t;
}

TEST(PlanCodec, TablesTheWireOmitsHaveNoOperation) {
  proto::CachePlan wire;
  EncodeCachePlan({Full(2)}, &wire);
  wire.mutable_tables(0)->set_table_id(1);
  auto back = DecodeCachePlan(wire, 2);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Flat((*back)[0]), Flat(TablePlan{}));
  EXPECT_EQ(Flat((*back)[1]), Flat(Full(2)));
}

absl::Status DecodeError(const proto::CachePlan& wire, uint32_t tables = 1) {
  return DecodeCachePlan(wire, tables).status();
}

TEST(PlanCodec, NamesTheFieldOfEveryBadList) {
  proto::CachePlan good;
  EncodeCachePlan({Full(2)}, &good);

  proto::CachePlan bad = good;
  bad.mutable_tables(0)->mutable_fetch()->mutable_keys()->resize(12);
  EXPECT_EQ(DecodeError(bad).message(),
            "plan.tables[0].fetch.keys: 12 bytes is not a multiple of 8");

  bad = good;
  bad.mutable_tables(0)->mutable_remote()->mutable_peers()->resize(4);
  EXPECT_EQ(DecodeError(bad).message(),
            "plan.tables[0].remote.peers has 1 entries but remote.keys has 2");

  bad = good;  // receive has no peers: the sender is known from `incoming`
  bad.mutable_tables(0)->mutable_receive()->set_peers(std::string(8, '\0'));
  EXPECT_EQ(DecodeError(bad).message(),
            "plan.tables[0].receive.peers has 2 entries; receive has no peers");

  bad = good;  // incoming rows have no slot yet
  bad.mutable_tables(0)->mutable_incoming()->set_slots(std::string(8, '\0'));
  EXPECT_EQ(DecodeError(bad).message(),
            "plan.tables[0].incoming.slots has 2 entries; incoming has no slots");

  bad = good;
  bad.mutable_tables(0)->mutable_fetch()->set_early(std::string(1, '\1'));
  EXPECT_EQ(DecodeError(bad).message(),
            "plan.tables[0].fetch.early has 1 entries but fetch.keys has 2");

  bad = good;
  bad.mutable_tables(0)->set_owned_slots(std::string(3, '\0'));
  EXPECT_EQ(DecodeError(bad).message(),
            "plan.tables[0].owned_slots: 3 bytes is not a multiple of 4");

  bad = good;
  bad.mutable_tables(0)->set_table_id(1);
  EXPECT_EQ(DecodeError(bad).message(), "plan.tables[0].table_id: 1 is unknown or repeated");
  bad = good;
  *bad.add_tables() = good.tables(0);
  EXPECT_EQ(DecodeError(bad, 2).message(), "plan.tables[1].table_id: 0 is unknown or repeated");
}

TEST(PlanCodec, FlagsMayBeOmitted) {
  TablePlan plan = Full(2);
  plan.fetch.early.clear();
  plan.send.served.clear();
  plan.receive.served.clear();
  plan.incoming.served.clear();
  EXPECT_TRUE(CheckShape(plan).ok()) << CheckShape(plan);
  EXPECT_FALSE(plan.send.Served(0));
  EXPECT_TRUE(Full(2).send.Served(1));
}

}  // namespace
}  // namespace herald::plan
