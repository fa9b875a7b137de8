#include "ps_server/shard/job_tables.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/math/optimizer_spec.h"

namespace herald::ps {

absl::StatusOr<std::vector<TableOptions>> TableOptionsFromSpec(const proto::JobSpec& spec,
                                                               uint32_t num_shards) {
  if (spec.tables_size() == 0) {
    return absl::InvalidArgumentError("tables: a job needs at least one embedding table");
  }
  if (num_shards == 0) return absl::InvalidArgumentError("num_shards: must be > 0");
  std::vector<TableOptions> out;
  for (int i = 0; i < spec.tables_size(); ++i) {
    const proto::TableSpec& t = spec.tables(i);
    const std::string field = absl::StrCat("tables[", i, "]");
    if (t.dim() == 0 || t.dim() > kMaxEmbeddingDim) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".dim: must be in [1, ", kMaxEmbeddingDim, "], got ", t.dim()));
    }
    if (t.init_scale() < 0 || !std::isfinite(t.init_scale())) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".init_scale: must be a finite number >= 0"));
    }
    auto optimizer = math::TableOptimizerFromSpec(spec, i);
    if (!optimizer.ok()) return optimizer.status();
    TableOptions o;
    o.id = TableId(static_cast<uint32_t>(i));
    o.dim = t.dim();
    o.optimizer = *optimizer;
    o.init_scale = t.init_scale();
    o.seed = spec.seed();
    o.max_rows = t.max_rows() == 0 ? 0 : (t.max_rows() + num_shards - 1) / num_shards;
    out.push_back(o);
  }
  return out;
}

}  // namespace herald::ps
