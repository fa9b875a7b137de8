#pragma once
// Columns of fixed-size little-endian values in protobuf `bytes` fields:
// the wire form of every plan and sample column (proto/plan.proto,
// proto/scheduler.proto StepSamples). Hosts are little-endian.

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace herald::plan {

template <typename T>
void PackColumn(const std::vector<T>& values, std::string* out) {
  out->assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// Errors: InvalidArgument naming `field` when the length is not a multiple
// of sizeof(T).
template <typename T>
absl::Status UnpackColumn(const std::string& bytes, absl::string_view field, std::vector<T>* out) {
  if (bytes.size() % sizeof(T) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", bytes.size(), " bytes is not a multiple of ", sizeof(T)));
  }
  out->resize(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(out->data(), bytes.data(), bytes.size());
  return absl::OkStatus();
}

}  // namespace herald::plan
