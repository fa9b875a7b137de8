#include "common/trained_label.h"

namespace herald {

std::vector<TrainedLabel> DataLabelsOf(const proto::JobSpec& spec) {
  std::vector<TrainedLabel> labels;
  for (const proto::ColumnSpec& c : spec.data().schema().columns()) {
    if (c.role() != proto::COLUMN_LABEL) continue;
    TrainedLabel label;
    label.name = c.name();
    label.regression = c.label() == proto::LABEL_REGRESSION;
    label.column = static_cast<uint32_t>(labels.size());
    labels.push_back(label);
  }
  if (labels.empty()) labels.emplace_back();
  return labels;
}

std::vector<TrainedLabel> TrainedLabelsOf(const proto::JobSpec& spec) {
  const std::vector<TrainedLabel> data = DataLabelsOf(spec);
  std::vector<TrainedLabel> trained;
  for (const proto::GraphNodeSpec& node : spec.model().graph().nodes()) {
    if (!node.has_head()) continue;
    TrainedLabel label = data[0];
    for (const TrainedLabel& d : data) {
      if (d.name == node.head().label()) label = d;
    }
    if (node.head().loss_weight() != 0) label.loss_weight = node.head().loss_weight();
    trained.push_back(label);
  }
  if (trained.empty()) trained.push_back(data[0]);
  return trained;
}

TrainedLabel TrainedLabelOf(const proto::JobSpec& spec) { return TrainedLabelsOf(spec)[0]; }

}  // namespace herald
