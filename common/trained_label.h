#pragma once
// The label a job's model predicts, and how its predictions are judged:
// the data schema's first label column (the model-graph's heads will name
// others), or the Criteo preset's one binary "label".

#include <string>

#include "proto/job.pb.h"

namespace herald {

struct TrainedLabel {
  std::string name = "label";
  // Regression (squared error, RMSE) rather than binary (cross-entropy on
  // a logit, AUC and log loss).
  bool regression = false;
};

TrainedLabel TrainedLabelOf(const proto::JobSpec& spec);

}  // namespace herald
