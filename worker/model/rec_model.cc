#include "worker/model/rec_model.h"

namespace herald::worker {

int ModelShape::width() const { return column(tables.size()); }

int ModelShape::column(size_t t) const {
  int c = num_dense;
  for (size_t i = 0; i < t; ++i) c += tables[i].dim;
  return c;
}

RecModel::RecModel(Device* device, ModelShape shape)
    : device_(device), shape_(std::move(shape)), params_(device) {
  for (const HeadShape& head : shape_.heads) {
    losses_.emplace_back(device, head.loss);
    doutputs_.emplace_back(device, 0);
    head_labels_.emplace_back(device, 0);
  }
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
  for (auto* a : {&x_, &dx_, &probabilities_}) a->Bind(device);
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

double RecModel::TakeLoss() const {
  // A weight of 1 changes no bit: one head's loss is as before weights.
  double loss = 0;
  for (size_t h = 0; h < losses_.size(); ++h) {
    loss += double(shape_.heads[h].weight) * losses_[h].TakeLoss();
  }
  return loss;
}

const float* RecModel::HeadLabels(const ModelInput& in, size_t h) {
  const uint32_t column = shape_.heads[h].label;
  if (shape_.num_labels == 1) return in.labels;
  head_labels_[h].Resize(in.rows);
  device_->Copy2D(in.labels + column, static_cast<int>(shape_.num_labels), in.rows, 1,
                  head_labels_[h].data(), 1);
  return head_labels_[h].data();
}

void RecModel::QueueTrainStep(const ModelInput& in, float grad_scale,
                              const GradsReady& grads_ready) {
  BeginPass(in, /*training=*/true);
  const std::vector<const float*> outputs = ForwardOutputs(BuildFeatures(in), in.rows);
  std::vector<const float*> doutputs;
  for (size_t h = 0; h < outputs.size(); ++h) {
    // A weight of 1 scales nothing, so one head's gradients are the bits of
    // a model without weights.
    losses_[h].Forward(outputs[h], HeadLabels(in, h), in.rows, grad_scale * shape_.heads[h].weight);
    doutputs_[h].Resize(in.rows);
    device_->Fill(doutputs_[h].data(), in.rows, 0.0f);
    losses_[h].Backward(doutputs_[h].data());
    doutputs.push_back(doutputs_[h].data());
  }
  dx_.Resize(x_.size());
  device_->Fill(dx_.data(), dx_.size(), 0.0f);
  BackwardOutputs(doutputs, dx_.data(), grads_ready);
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
  BeginPass(in, /*training=*/false);
  const std::vector<const float*> outputs = ForwardOutputs(BuildFeatures(in), in.rows);
  const size_t heads = outputs.size();
  probabilities_.Resize(static_cast<size_t>(in.rows) * heads);
  for (size_t h = 0; h < heads; ++h) {
    losses_[h].Predict(outputs[h], in.rows, probabilities_.data() + h * in.rows);
  }
  std::vector<float> by_head = probabilities_.ToHost();
  if (heads == 1) return by_head;
  std::vector<float> by_sample(by_head.size());
  for (size_t h = 0; h < heads; ++h) {
    for (int s = 0; s < in.rows; ++s) by_sample[s * heads + h] = by_head[h * in.rows + s];
  }
  return by_sample;
}

}  // namespace herald::worker
