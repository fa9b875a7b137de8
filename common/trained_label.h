#pragma once
// The labels a job's model predicts, and how its predictions are judged:
// one per head of a model graph (model.graph), in the order the heads are
// listed; for a built-in model, the data schema's first label column, or
// the Criteo preset's one binary "label".

#include <cstdint>
#include <string>
#include <vector>

#include "proto/job.pb.h"

namespace herald {

struct TrainedLabel {
  std::string name = "label";
  // Regression (squared error, RMSE) rather than binary (cross-entropy on
  // a logit, AUC and log loss).
  bool regression = false;
  // Its place among the data's label columns (a sample's labels in
  // data::KeyBatch and on the wire).
  uint32_t column = 0;
  // Its share of the loss (HeadSpec.loss_weight).
  float loss_weight = 1.0f;
};

// Every label the model trains, one per head; never empty. A head naming a
// label the data lacks gets column 0 here: the spec check refuses it
// (model_graph.h).
std::vector<TrainedLabel> TrainedLabelsOf(const proto::JobSpec& spec);
// The first of them.
TrainedLabel TrainedLabelOf(const proto::JobSpec& spec);
// The data's label columns: data.schema's, or Criteo's one "label".
std::vector<TrainedLabel> DataLabelsOf(const proto::JobSpec& spec);

}  // namespace herald
