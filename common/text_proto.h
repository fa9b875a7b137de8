#pragma once
// Protobuf text format read with the place of the first error.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace herald {

// Parses `text` into `out`. Errors: InvalidArgument "line L:C: <reason>"
// for the first error (1-based line and column).
absl::Status ParseTextProto(absl::string_view text, google::protobuf::Message* out);

}  // namespace herald
