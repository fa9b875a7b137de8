#include "worker/model/rec_model.h"

namespace herald::worker {

int ModelShape::width() const { return column(tables.size()); }

int ModelShape::column(size_t t) const {
  int c = num_dense;
  for (size_t i = 0; i < t; ++i) c += tables[i].dim;
  return c;
}

RecModel::RecModel(Device* device, ModelShape shape)
    : device_(device), shape_(std::move(shape)), params_(device), loss_(device) {
  for (const TableShape& t : shape_.tables) bags_.emplace_back(device, t.dim, t.mean_pooling);
  for (auto* a : {&x_, &dx_, &dlogits_, &probabilities_}) a->Bind(device);
}

const float* RecModel::BuildFeatures(const ModelInput& in) {
  const int width = shape_.width();
  x_.Resize(static_cast<size_t>(in.rows) * width);
  if (shape_.num_dense > 0) {
    device_->Copy2D(in.dense, shape_.num_dense, in.rows, shape_.num_dense, x_.data(), width);
  }
  device_->EmbeddingBagsForward(BagTables(in), in.rows, x_.data(), width);
  return x_.data();
}

double RecModel::TrainStep(const ModelInput& in, float grad_scale) {
  QueueTrainStep(in, grad_scale);
  return TakeLoss();
}

double RecModel::TakeLoss() const { return loss_.TakeLoss(); }

void RecModel::QueueTrainStep(const ModelInput& in, float grad_scale) {
  const float* logits = ForwardHead(BuildFeatures(in), in.rows);
  loss_.Forward(logits, in.labels, in.rows, grad_scale);
  dlogits_.Resize(in.rows);
  device_->Fill(dlogits_.data(), in.rows, 0.0f);
  loss_.Backward(dlogits_.data());
  dx_.Resize(x_.size());
  device_->Fill(dx_.data(), dx_.size(), 0.0f);
  BackwardHead(dlogits_.data(), dx_.data());
  device_->EmbeddingBagsBackward(BagTables(in), in.rows, dx_.data(), shape_.width());
}

std::vector<Device::BagTable> RecModel::BagTables(const ModelInput& in) const {
  std::vector<Device::BagTable> tables;
  tables.reserve(bags_.size());
  for (size_t t = 0; t < bags_.size(); ++t) {
    tables.push_back(bags_[t].Table(in.tables[t], shape_.column(t)));
  }
  return tables;
}

std::vector<float> RecModel::Predict(const ModelInput& in) {
  const float* logits = ForwardHead(BuildFeatures(in), in.rows);
  probabilities_.Resize(in.rows);
  device_->Sigmoid(logits, in.rows, probabilities_.data());
  return probabilities_.ToHost();
}

}  // namespace herald::worker
