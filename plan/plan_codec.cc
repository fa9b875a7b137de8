#include "plan/plan_codec.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "plan/wire_columns.h"

namespace herald::plan {
namespace {

// One overload per group of columns: encode and decode a list.
void Encode(const SlotRows& rows, proto::SlotRows* out) {
  PackColumn(rows.slots, out->mutable_slots());
  PackColumn(rows.keys, out->mutable_keys());
}
void Encode(const FetchRows& rows, proto::FetchRows* out) {
  PackColumn(rows.slots, out->mutable_slots());
  PackColumn(rows.keys, out->mutable_keys());
  PackColumn(rows.early, out->mutable_early());
}
void Encode(const PeerRows& rows, proto::PeerRows* out) {
  PackColumn(rows.slots, out->mutable_slots());
  PackColumn(rows.keys, out->mutable_keys());
  PackColumn(rows.peers, out->mutable_peers());
  PackColumn(rows.served, out->mutable_served());
}

absl::Status Decode(const proto::SlotRows& in, const std::string& field, SlotRows* rows) {
  HERALD_RETURN_IF_ERROR(UnpackColumn(in.slots(), field + ".slots", &rows->slots));
  return UnpackColumn(in.keys(), field + ".keys", &rows->keys);
}
absl::Status Decode(const proto::FetchRows& in, const std::string& field, FetchRows* rows) {
  HERALD_RETURN_IF_ERROR(UnpackColumn(in.slots(), field + ".slots", &rows->slots));
  HERALD_RETURN_IF_ERROR(UnpackColumn(in.keys(), field + ".keys", &rows->keys));
  return UnpackColumn(in.early(), field + ".early", &rows->early);
}
absl::Status Decode(const proto::PeerRows& in, const std::string& field, PeerRows* rows) {
  HERALD_RETURN_IF_ERROR(UnpackColumn(in.slots(), field + ".slots", &rows->slots));
  HERALD_RETURN_IF_ERROR(UnpackColumn(in.keys(), field + ".keys", &rows->keys));
  HERALD_RETURN_IF_ERROR(UnpackColumn(in.peers(), field + ".peers", &rows->peers));
  return UnpackColumn(in.served(), field + ".served", &rows->served);
}

// The wire field of each list (owned_slots aside): the codec's one place
// per kind of operation, named as in ForEachList (plan_codec_test
// round-trips a plan with every list filled, so a list left out here fails).
template <typename Visitor>
void ForEachWireList(Visitor&& v) {
  v("drop", &TablePlan::drop, &proto::TablePlan::drop, &proto::TablePlan::mutable_drop);
  v("evict", &TablePlan::evict, &proto::TablePlan::evict, &proto::TablePlan::mutable_evict);
  v("fetch", &TablePlan::fetch, &proto::TablePlan::fetch, &proto::TablePlan::mutable_fetch);
  v("init", &TablePlan::init, &proto::TablePlan::init, &proto::TablePlan::mutable_init);
  v("receive", &TablePlan::receive, &proto::TablePlan::receive, &proto::TablePlan::mutable_receive);
  v("hold", &TablePlan::hold, &proto::TablePlan::hold, &proto::TablePlan::mutable_hold);
  v("push", &TablePlan::push, &proto::TablePlan::push, &proto::TablePlan::mutable_push);
  v("flush", &TablePlan::flush, &proto::TablePlan::flush, &proto::TablePlan::mutable_flush);
  v("remote", &TablePlan::remote, &proto::TablePlan::remote, &proto::TablePlan::mutable_remote);
  v("gather", &TablePlan::gather, &proto::TablePlan::gather, &proto::TablePlan::mutable_gather);
  v("writeback", &TablePlan::writeback, &proto::TablePlan::writeback,
    &proto::TablePlan::mutable_writeback);
  v("send", &TablePlan::send, &proto::TablePlan::send, &proto::TablePlan::mutable_send);
  v("incoming", &TablePlan::incoming, &proto::TablePlan::incoming,
    &proto::TablePlan::mutable_incoming);
  v("expire", &TablePlan::expire, &proto::TablePlan::expire, &proto::TablePlan::mutable_expire);
}

}  // namespace

void EncodeCachePlan(const std::vector<TablePlan>& tables, proto::CachePlan* out) {
  for (size_t t = 0; t < tables.size(); ++t) {
    const TablePlan& plan = tables[t];
    proto::TablePlan* wire = out->add_tables();
    wire->set_table_id(static_cast<uint32_t>(t));
    PackColumn(plan.owned_slots, wire->mutable_owned_slots());
    ForEachWireList([&](const char*, auto list, auto /*get*/, auto mutable_get) {
      Encode(plan.*list, (wire->*mutable_get)());
    });
  }
}

absl::StatusOr<std::vector<TablePlan>> DecodeCachePlan(const proto::CachePlan& in,
                                                       uint32_t num_tables) {
  std::vector<TablePlan> tables(num_tables);
  std::vector<bool> planned(num_tables, false);
  for (int i = 0; i < in.tables_size(); ++i) {
    const proto::TablePlan& wire = in.tables(i);
    const std::string field = absl::StrCat("plan.tables[", i, "]");
    if (wire.table_id() >= num_tables || planned[wire.table_id()]) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".table_id: ", wire.table_id(), " is unknown or repeated"));
    }
    planned[wire.table_id()] = true;
    TablePlan& plan = tables[wire.table_id()];
    HERALD_RETURN_IF_ERROR(
        UnpackColumn(wire.owned_slots(), field + ".owned_slots", &plan.owned_slots));
    absl::Status status;
    ForEachWireList([&](const char* name, auto list, auto get, auto /*mutable_get*/) {
      if (status.ok())
        status = Decode((wire.*get)(), absl::StrCat(field, ".", name), &(plan.*list));
    });
    HERALD_RETURN_IF_ERROR(status);
    if (absl::Status shape = CheckShape(plan); !shape.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".", shape.message()));
    }
  }
  return tables;
}

}  // namespace herald::plan
