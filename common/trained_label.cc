#include "common/trained_label.h"

namespace herald {

TrainedLabel TrainedLabelOf(const proto::JobSpec& spec) {
  TrainedLabel label;
  for (const proto::ColumnSpec& c : spec.data().schema().columns()) {
    if (c.role() != proto::COLUMN_LABEL) continue;
    label.name = c.name();
    label.regression = c.label() == proto::LABEL_REGRESSION;
    break;
  }
  return label;
}

}  // namespace herald
