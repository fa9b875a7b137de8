#pragma once
// Status helpers used at every API boundary (absl::Status / absl::StatusOr).

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace herald {

// Returns `status` with "context: " prepended to its message (same code).
// An OK status is returned unchanged.
inline absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(context, ": ", status.message()));
}

}  // namespace herald

#define HERALD_STATUS_CONCAT_INNER(a, b) a##b
#define HERALD_STATUS_CONCAT(a, b) HERALD_STATUS_CONCAT_INNER(a, b)

// Returns from the current function if `expr` (an absl::Status) is not OK.
#define HERALD_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status herald_status_ = (expr);          \
    if (!herald_status_.ok()) return herald_status_; \
  } while (0)

// `lhs = value of expr` where expr is an absl::StatusOr<T>; returns its status
// from the current function if it is not OK.
#define HERALD_ASSIGN_OR_RETURN(lhs, expr) \
  HERALD_ASSIGN_OR_RETURN_IMPL(HERALD_STATUS_CONCAT(herald_statusor_, __LINE__), lhs, expr)

#define HERALD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()
