#include "worker/model/model_factory.h"

#include "common/model_graph.h"
#include "common/model_spec_check.h"
#include "common/status.h"
#include "common/trained_label.h"
#include "worker/model/models.h"

namespace herald::worker {

Pooling PoolingOf(proto::PoolingKind kind) {
  switch (kind) {
    case proto::POOLING_MEAN:
      return Pooling::kMean;
    case proto::POOLING_SQRT_N:
      return Pooling::kSqrtN;
    default:
      return Pooling::kSum;
  }
}

ModelShape ShapeFromSpec(const proto::JobSpec& spec) {
  ModelShape shape;
  shape.num_dense = static_cast<int>(spec.num_dense());
  shape.num_labels = static_cast<uint32_t>(DataLabelsOf(spec).size());
  shape.heads.clear();
  for (const TrainedLabel& label : TrainedLabelsOf(spec)) {
    shape.heads.push_back(
        {label.regression ? LossKind::kSquaredError : LossKind::kBinaryCrossEntropy, label.column,
         label.loss_weight});
  }
  if (!spec.data().has_schema()) {  // feature t looks up table t
    for (int t = 0; t < spec.tables_size(); ++t) {
      const proto::TableSpec& table = spec.tables(t);
      shape.tables.push_back(
          {static_cast<int>(table.dim()), PoolingOf(table.pooling()), static_cast<uint32_t>(t)});
    }
    return shape;
  }
  // One bag per sparse column, in column order, of the table it names
  // (the spec is resolved: every named table is in spec.tables).
  for (const proto::ColumnSpec& c : spec.data().schema().columns()) {
    if (c.role() != proto::COLUMN_SPARSE) continue;
    const std::string& name = c.table().empty() ? c.name() : c.table();
    for (int t = 0; t < spec.tables_size(); ++t) {
      if (spec.tables(t).name() != name) continue;
      const proto::PoolingKind pooling = c.has_pooling() ? c.pooling() : spec.tables(t).pooling();
      shape.tables.push_back(
          {static_cast<int>(spec.tables(t).dim()), PoolingOf(pooling), static_cast<uint32_t>(t)});
      break;
    }
  }
  std::vector<uint32_t> seen(spec.tables_size(), 0);
  for (TableShape& feature : shape.tables) feature.index_in_table = seen[feature.table]++;
  return shape;
}

absl::StatusOr<std::unique_ptr<RecModel>> CreateModel(const proto::JobSpec& spec, Device* device) {
  if (auto s = ValidateModelSpec(spec); !s.ok()) return s;
  // A built-in kind is its graph (common/builtin_model_graph.h).
  HERALD_ASSIGN_OR_RETURN(ResolvedGraph graph, ResolveModelGraph(spec));
  std::unique_ptr<RecModel> model =
      MakeGraphModel(device, ShapeFromSpec(spec), std::move(graph), spec.seed());
  model->params().Initialize(spec.seed());
  return model;
}

}  // namespace herald::worker
