#pragma once
// Scores one batch of held-out samples (WorkerStep.eval) on a worker's
// current model: the batch's rows are fetched read-only from the PS shards
// as of the end of iteration - 1 (the scheduler evaluates only after an
// iteration that wrote every dirty cached row back, so the shards hold the
// whole model), and the dense replica runs the forward pass. The embedding
// cache is not touched, so the training plan stays valid.
//
// The slots and the forward pass are those of ReferenceTrainer::Predict,
// so the same batch on the same device type gives the same bits as
// `heraldctl evaluate`.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "proto/scheduler.pb.h"
#include "ps_server/client/ps_client.h"
#include "worker/device/device.h"
#include "worker/device/device_array.h"
#include "worker/model/feature_inputs.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

class HeldOutScorer {
 public:
  // `ps`, `model` and `device` must outlive the scorer.
  HeldOutScorer(const proto::JobSpec& spec, std::string job_id, ps::PsClient* ps, RecModel* model,
                Device* device);

  // Click probabilities of the batch's samples, in order. Errors:
  // InvalidArgument naming the field of a batch that does not fit the job
  // (sizes, offsets), the PS client's.
  absl::StatusOr<std::vector<float>> Score(const proto::EvalBatch& batch, uint64_t iteration);

 private:
  struct TableArrays {
    DeviceArray<float> rows;  // the batch's rows of the table, in first-use order
  };

  const proto::JobSpec spec_;
  const std::string job_id_;
  ps::PsClient* ps_;
  RecModel* model_;
  std::vector<TableArrays> tables_;
  std::unique_ptr<FeatureInputs> feature_inputs_;  // every feature's bags
  DeviceArray<float> dense_;
};

}  // namespace herald::worker
