#include "worker/model/model_factory.h"

#include "absl/strings/str_cat.h"
#include "common/model_graph.h"
#include "common/model_spec_check.h"
#include "common/status.h"
#include "common/trained_label.h"
#include "worker/model/models.h"

namespace herald::worker {
namespace {

absl::Status Invalid(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

std::vector<int> Widths(const google::protobuf::RepeatedField<uint32_t>& widths) {
  return std::vector<int>(widths.begin(), widths.end());
}

}  // namespace

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
  const proto::ModelSpec& m = spec.model();
  ModelShape shape = ShapeFromSpec(spec);
  const std::vector<int> hidden = Widths(m.top_mlp());
  std::unique_ptr<RecModel> model;
  if (m.has_graph()) {
    HERALD_ASSIGN_OR_RETURN(ResolvedGraph graph, ResolveModelGraph(spec));
    model = MakeGraphModel(device, std::move(shape), std::move(graph));
    model->params().Initialize(spec.seed());
    return model;
  }
  switch (m.kind()) {
    case proto::MODEL_WIDE_AND_DEEP:
      model = MakeWideAndDeep(device, std::move(shape), hidden);
      break;
    case proto::MODEL_DEEPFM:
      model = MakeDeepFm(device, std::move(shape), hidden);
      break;
    case proto::MODEL_DCN:
      model = MakeDcn(device, std::move(shape), hidden, static_cast<int>(m.cross_layers()));
      break;
    case proto::MODEL_NCF:
      model = MakeNcf(device, std::move(shape), hidden);
      break;
    case proto::MODEL_DLRM:
      model = MakeDlrm(device, std::move(shape), Widths(m.bottom_mlp()), hidden);
      break;
    default:
      return Invalid("model.kind", "unset or unknown");
  }
  model->params().Initialize(spec.seed());
  return model;
}

}  // namespace herald::worker
