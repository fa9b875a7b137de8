#pragma once
// The single-process yardstick: trains the model on the whole global batch
// with local embedding tables and no PS, with the same layers, optimizer
// math and row initialisation as the distributed system. Partitioning the
// global batch over workers (any policy, any worker count) must give the
// same model as this trainer up to float rounding (tests/ exactness tests).
//
// Each iteration: the batch's distinct keys get slots in a scratch slot
// array (first-touch rows initialised exactly as the PS does), forward and
// backward over the whole batch (gradient scale 1/batch), dense step, then
// one sparse optimizer step per touched row.

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/data/key_batch.h"
#include "proto/job.pb.h"
#include "worker/device/device.h"
#include "worker/model/dense_optimizer.h"
#include "worker/model/feature_inputs.h"
#include "worker/model/rec_model.h"

namespace herald::worker {

class ReferenceTrainer {
 public:
  static absl::StatusOr<std::unique_ptr<ReferenceTrainer>> Create(const proto::JobSpec& spec,
                                                                  Device* device);

  // One iteration on `batch` (the job's iteration 0 first, then 1, …: the
  // learning-rate schedules' clock), then the rows of the keys the batch
  // lists as expired are deleted. Returns Σ loss.
  absl::StatusOr<double> Train(const data::KeyBatch& batch);
  // Click probabilities with the current model (rows are not created).
  std::vector<float> Predict(const data::KeyBatch& batch);

  // Replaces the model by a trained one (e.g. an export). Errors:
  // InvalidArgument when `values` is not the model's size, or a row has the
  // wrong width or table.
  absl::Status LoadDense(const std::vector<float>& values);
  absl::Status LoadRow(uint32_t table, Key key, const float* row, uint32_t row_floats);

  // Row (values + optimizer state) of `key`, initialised if never touched.
  std::vector<float> Row(uint32_t table, Key key) const;
  std::vector<float> DenseValues() const { return model_->params().values().ToHost(); }
  // The dense optimizer's state (e.g. Adam's moments), as a worker's.
  std::vector<float> DenseOptimizerState() { return dense_optimizer_.state().ToHost(); }
  RecModel& model() { return *model_; }

 private:
  struct Table {
    uint32_t dim;
    uint32_t row_floats;
    float init_scale;
    math::SparseOptimizerConfig optimizer;
    absl::flat_hash_map<Key, std::vector<float>> rows;
  };

  ReferenceTrainer(const proto::JobSpec& spec, Device* device, std::unique_ptr<RecModel> model,
                   DenseOptimizer dense_optimizer, std::vector<Table> tables);
  std::vector<float> InitialRow(uint32_t table, Key key) const;
  // Builds slot arrays on the device for the batch's keys; fills `input`.
  void Stage(const data::KeyBatch& batch, bool create_rows, ModelInput* input);

  proto::JobSpec spec_;
  Device* device_;
  std::unique_ptr<RecModel> model_;
  DenseOptimizer dense_optimizer_;
  std::vector<Table> tables_;

  // Per-iteration staging (per table): distinct keys in first-use order.
  std::vector<std::vector<Key>> batch_keys_;
  std::vector<DeviceArray<float>> rows_, grads_;
  // Per table: each key use's row (Stage); per feature: its bags.
  std::vector<std::vector<uint32_t>> table_slots_;
  std::unique_ptr<FeatureInputs> feature_inputs_;
  DeviceArray<uint32_t> all_slots_;
  uint64_t iterations_ = 0;  // trained so far: the next one's index
  DeviceArray<float> labels_, dense_;
};

}  // namespace herald::worker
