#include "ps_server/client/ps_client.h"

#include "absl/strings/str_cat.h"

namespace herald::ps {

absl::Status CheckSink(const std::vector<TableKeys>& keys, const RowSink& sink) {
  if (sink.rows.size() != keys.size() || sink.versions.size() != keys.size() ||
      sink.row_floats.size() != keys.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fetch sink: ", sink.rows.size(), " row blocks, ", sink.versions.size(),
        " version blocks and ", sink.row_floats.size(), " widths for ", keys.size(), " tables"));
  }
  for (size_t t = 0; t < keys.size(); ++t) {
    if (sink.row_floats[t] == 0 ||
        (!keys[t].keys.empty() && (sink.rows[t] == nullptr || sink.versions[t] == nullptr))) {
      return absl::InvalidArgumentError(absl::StrCat("fetch sink: table ", keys[t].table.value(),
                                                     " (entry ", t,
                                                     ") has no memory or a width of 0"));
    }
  }
  return absl::OkStatus();
}

}  // namespace herald::ps
