#pragma once
// A recommendation model: embedding bags of every table and the dense
// features form one feature matrix X = [dense | bag_0 | bag_1 | …] per batch;
// a model-specific head maps X to one output per sample; the loss is sigmoid
// binary cross-entropy on it as a logit (a binary label) or its squared
// error (a regression label). Built from the job spec by CreateModel()
// (model_factory.h), written once against the Device interface.

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

struct ModelShape {
  int num_dense = 0;
  // The label the model predicts: binary (a logit, cross-entropy) or
  // regression (the value, squared error).
  LossKind loss = LossKind::kBinaryCrossEntropy;
  std::vector<TableShape> tables;  // one per feature, in feature order

  int width() const;           // columns of X
  int column(size_t t) const;  // first column of table t's bag in X
};

// One batch on the device.
struct ModelInput {
  int rows = 0;
  const float* dense = nullptr;   // rows × num_dense
  const float* labels = nullptr;  // rows (unused by Predict)
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
  void QueueTrainStep(const ModelInput& in, float grad_scale);
  double TakeLoss() const;
  // The batch's predictions, on the host: click probabilities for a binary
  // label, values for a regression label.
  std::vector<float> Predict(const ModelInput& in);

  DenseParameters& params() { return params_; }
  const ModelShape& shape() const { return shape_; }

 protected:
  RecModel(Device* device, ModelShape shape);

  // x: rows × shape().width(), contiguous. Returns the logits (rows).
  virtual const float* ForwardHead(const float* x, int rows) = 0;
  // Adds the head's gradient w.r.t. x into dx given ∂loss/∂logits.
  virtual void BackwardHead(const float* dlogits, float* dx) = 0;

  Device* device_;
  ModelShape shape_;
  DenseParameters params_;

 private:
  const float* BuildFeatures(const ModelInput& in);
  std::vector<Device::BagTable> BagTables(const ModelInput& in) const;

  std::vector<EmbeddingBag> bags_;
  // Features in backward rounds: round k holds each table's k-th feature.
  std::vector<std::vector<uint32_t>> backward_rounds_;
  bool shared_tables_ = false;
  HeadLoss loss_;
  DeviceArray<float> x_, dx_, dlogits_, probabilities_;
};

}  // namespace herald::worker
