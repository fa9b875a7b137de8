#include "worker/model/rec_model.h"

namespace herald::worker {

int ModelShape::width() const { return column(tables.size()); }

int ModelShape::column(size_t t) const {
  int c = num_dense;
  for (size_t i = 0; i < t; ++i) c += tables[i].dim;
  return c;
}

RecModel::RecModel(Device* device, ModelShape shape)
    : device_(device), shape_(std::move(shape)), params_(device), loss_(device, shape_.loss) {
  for (const TableShape& t : shape_.tables) bags_.emplace_back(device, t.dim, t.pooling);
  std::vector<uint32_t> seen_of_table;  // features seen so far per table
  for (uint32_t f = 0; f < shape_.tables.size(); ++f) {
    const uint32_t table = shape_.tables[f].table;
    if (table >= seen_of_table.size()) seen_of_table.resize(table + 1, 0);
    const uint32_t round = seen_of_table[table]++;
    if (round >= backward_rounds_.size()) backward_rounds_.resize(round + 1);
    backward_rounds_[round].push_back(f);
  }
  shared_tables_ = backward_rounds_.size() > 1;
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
  // Features sharing a table add into one gradient array: one call per
  // round, the k-th feature of every table in round k, so no call has two
  // bags adding into the same array (a device may run a call's bags at
  // once) and the order is the features' on every device.
  const std::vector<Device::BagTable> all = BagTables(in);
  if (!shared_tables_) {
    device_->EmbeddingBagsBackward(all, in.rows, dx_.data(), shape_.width());
    return;
  }
  for (const std::vector<uint32_t>& round : backward_rounds_) {
    std::vector<Device::BagTable> bags;
    for (uint32_t f : round) bags.push_back(all[f]);
    device_->EmbeddingBagsBackward(bags, in.rows, dx_.data(), shape_.width());
  }
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
  loss_.Predict(logits, in.rows, probabilities_.data());
  return probabilities_.ToHost();
}

}  // namespace herald::worker
