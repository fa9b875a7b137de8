#include "plan/table_plan.h"

#include <type_traits>

#include "absl/strings/str_cat.h"

namespace herald::plan {
namespace {

// A column with `want` entries when the kind has it, none otherwise;
// optional columns (flags) may also be empty.
absl::Status CheckColumn(absl::string_view list, absl::string_view column, size_t size, bool has,
                         bool optional, size_t want) {
  if (has ? (size == want || (optional && size == 0)) : size == 0) return absl::OkStatus();
  if (!has) {
    return absl::InvalidArgumentError(
        absl::StrCat(list, ".", column, " has ", size, " entries; ", list, " has no ", column));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(list, ".", column, " has ", size, " entries but ", list, ".keys has ", want));
}

struct ShapeCheck {
  absl::Status status;

  void operator()(absl::string_view, const std::vector<uint32_t>&, uint8_t) {}  // owned_slots
  void operator()(absl::string_view name, const SlotRows& rows, uint8_t) {
    Check(name, "slots", rows.slots.size(), true, false, rows.keys.size());
  }
  void operator()(absl::string_view name, const FetchRows& rows, uint8_t) {
    Check(name, "slots", rows.slots.size(), true, false, rows.keys.size());
    Check(name, "early", rows.early.size(), true, true, rows.keys.size());
  }
  void operator()(absl::string_view name, const PeerRows& rows, uint8_t columns) {
    const size_t n = rows.keys.size();
    Check(name, "slots", rows.slots.size(), columns & kSlots, false, n);
    Check(name, "peers", rows.peers.size(), columns & kPeers, false, n);
    Check(name, "served", rows.served.size(), columns & kFlags, true, n);
  }
  void Check(absl::string_view list, absl::string_view column, size_t size, bool has, bool optional,
             size_t want) {
    if (status.ok()) status = CheckColumn(list, column, size, has, optional, want);
  }
};

}  // namespace

absl::Status CheckShape(const TablePlan& plan) {
  ShapeCheck check;
  ForEachList(plan, check);
  return check.status;
}

}  // namespace herald::plan
