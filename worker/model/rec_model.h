#pragma once
// A recommendation model: embedding bags of every table and the dense
// features form one feature matrix X = [dense | bag_0 | bag_1 | …] per batch;
// the model maps X to one output per head and sample (a built-in model has
// one head; a model graph one per label it trains). A head's loss is sigmoid
// binary cross-entropy on its output as a logit (a binary label) or its
// squared error (a regression label); the model's loss is Σ weight · loss
// over its heads. Built from the job spec by CreateModel()
// (model_factory.h), written once against the Device interface.

#include <functional>
#include <memory>
#include <vector>

#include "worker/device/device.h"
#include "worker/device/device_array.h"
#include "worker/model/dense_parameters.h"
#include "worker/model/embedding_bag.h"
#include "worker/model/head_loss.h"

namespace herald::worker {

// One bag of X: a sparse feature, pooled from the rows of the table it
// looks up. Several features may look up one table (their rows shared).
struct TableShape {
  int dim = 0;
  Pooling pooling = Pooling::kSum;
  uint32_t table = 0;  // the embedding table (cache table) it reads
  // Its place among the features of that table (FeatureBags' index).
  uint32_t index_in_table = 0;
};

// One output of the model and the label it predicts.
struct HeadShape {
  // Binary (a logit, cross-entropy) or regression (the value, squared error).
  LossKind loss = LossKind::kBinaryCrossEntropy;
  uint32_t label = 0;   // the label's column among a sample's labels
  float weight = 1.0f;  // its share of the loss
};

struct ModelShape {
  int num_dense = 0;
  uint32_t num_labels = 1;          // labels per sample in ModelInput
  std::vector<HeadShape> heads{1};  // the model's outputs, in order
  std::vector<TableShape> tables;   // one per feature, in feature order

  int width() const;           // columns of X
  int column(size_t t) const;  // first column of table t's bag in X
};

// One batch on the device.
struct ModelInput {
  int rows = 0;
  const float* dense = nullptr;   // rows × num_dense
  const float* labels = nullptr;  // rows × shape.num_labels (unused by Predict)
  // Training only, for dropout masks (dropout.h): the iteration, and each
  // row's index in the global batch (device memory; null: the row's own).
  uint64_t iteration = 0;
  const uint32_t* sample_ids = nullptr;
  // One per feature (ModelShape::tables): its bags, over the rows and
  // gradients of the table it looks up.
  std::vector<EmbeddingBagInput> tables;
};

class RecModel {
 public:
  virtual ~RecModel() = default;

  // Forward and backward on one batch. Writes every dense gradient into
  // params().grads() and ADDS the embedding gradients into each table's
  // slot_grads. Gradients are of Σ loss · grad_scale. Returns Σ loss.
  double TrainStep(const ModelInput& in, float grad_scale);
  // TrainStep in two halves: queue the work on the device, then (any time
  // before the next step) read Σ loss, which waits for the device.
  //
  // `grads_ready` (may be empty), called on this thread during the
  // backward whenever more of the dense gradients are queued whole:
  // params().grads()[begin, size()) will change no more this step (on an
  // asynchronous device, once the queued work ran). `begin` only falls,
  // and is 0 by the end, so the all-reduce of the last layers' gradients
  // can start while the first layers' backward runs.
  using GradsReady = std::function<void(size_t begin)>;
  void QueueTrainStep(const ModelInput& in, float grad_scale,
                      const GradsReady& grads_ready = nullptr);
  double TakeLoss() const;
  // The batch's predictions, on the host, sample by sample and head by head
  // (rows × heads): click probabilities for a binary label, values for a
  // regression label.
  std::vector<float> Predict(const ModelInput& in);

  DenseParameters& params() { return params_; }
  const ModelShape& shape() const { return shape_; }

 protected:
  RecModel(Device* device, ModelShape shape);

  // Before each pass's ForwardOutputs: the batch, and whether the pass
  // trains (dropout) or predicts.
  virtual void BeginPass(const ModelInput& in, bool training) = 0;
  // x: rows × shape().width(), contiguous. Returns each head's outputs
  // (rows floats each, contiguous), in head order.
  virtual std::vector<const float*> ForwardOutputs(const float* x, int rows) = 0;
  // Adds the gradient w.r.t. x into dx given ∂loss/∂outputs of each head;
  // tells `grads_ready` (if set) of every suffix of the dense gradients
  // that became final (QueueTrainStep).
  virtual void BackwardOutputs(const std::vector<const float*>& doutputs, float* dx,
                               const GradsReady& grads_ready) = 0;

  Device* device_;
  ModelShape shape_;
  DenseParameters params_;

 private:
  const float* BuildFeatures(const ModelInput& in);
  // Head h's labels, rows floats contiguous (copied out of the batch's
  // labels where a sample has several).
  const float* HeadLabels(const ModelInput& in, size_t h);
  std::vector<Device::BagTable> BagTables(const ModelInput& in) const;

  std::vector<EmbeddingBag> bags_;
  // Features in backward rounds: round k holds each table's k-th feature.
  std::vector<std::vector<uint32_t>> backward_rounds_;
  bool shared_tables_ = false;
  std::vector<HeadLoss> losses_;                 // per head
  std::vector<DeviceArray<float>> doutputs_;     // per head, rows
  std::vector<DeviceArray<float>> head_labels_;  // per head: its label column, where copied
  DeviceArray<float> x_, dx_, probabilities_;
};

}  // namespace herald::worker
