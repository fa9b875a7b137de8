#include "worker/reference/reference_trainer.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/math/optimizer_spec.h"
#include "common/status.h"
#include "worker/model/model_factory.h"

namespace herald::worker {

absl::StatusOr<std::unique_ptr<ReferenceTrainer>> ReferenceTrainer::Create(
    const proto::JobSpec& spec, Device* device) {
  HERALD_ASSIGN_OR_RETURN(std::unique_ptr<RecModel> model, CreateModel(spec, device));
  HERALD_ASSIGN_OR_RETURN(
      DenseOptimizer dense,
      DenseOptimizer::Create(spec.dense_optimizer(), device, model->params().size()));
  std::vector<Table> tables;
  for (int t = 0; t < spec.tables_size(); ++t) {
    HERALD_ASSIGN_OR_RETURN(math::SparseOptimizerConfig optimizer,
                            math::TableOptimizerFromSpec(spec, t));
    Table table;
    table.dim = spec.tables(t).dim();
    table.row_floats = math::RowFloats(optimizer.kind, table.dim);
    table.init_scale = spec.tables(t).init_scale();
    table.optimizer = optimizer;
    tables.push_back(std::move(table));
  }
  return std::unique_ptr<ReferenceTrainer>(
      new ReferenceTrainer(spec, device, std::move(model), std::move(dense), std::move(tables)));
}

ReferenceTrainer::ReferenceTrainer(const proto::JobSpec& spec, Device* device,
                                   std::unique_ptr<RecModel> model, DenseOptimizer dense_optimizer,
                                   std::vector<Table> tables)
    : spec_(spec),
      device_(device),
      model_(std::move(model)),
      dense_optimizer_(std::move(dense_optimizer)),
      tables_(std::move(tables)) {
  const size_t n = tables_.size();
  batch_keys_.resize(n);
  table_slots_.resize(n);
  rows_.resize(n);
  grads_.resize(n);
  for (size_t t = 0; t < n; ++t) {
    rows_[t].Bind(device);
    grads_[t].Bind(device);
  }
  feature_inputs_ = std::make_unique<FeatureInputs>(device, model_->shape());
  all_slots_.Bind(device);
  labels_.Bind(device);
  dense_.Bind(device);
}

std::vector<float> ReferenceTrainer::InitialRow(uint32_t table, Key key) const {
  const Table& t = tables_[table];
  std::vector<float> row(t.row_floats);
  math::InitialRow(spec_.seed(), table, key, t.dim, t.init_scale, t.optimizer, row.data());
  return row;
}

absl::Status ReferenceTrainer::LoadDense(const std::vector<float>& values) {
  if (values.size() != model_->params().size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dense parameters: ", values.size(), " values, the model has ", model_->params().size()));
  }
  model_->params().SetValues(values);
  return absl::OkStatus();
}

absl::Status ReferenceTrainer::LoadRow(uint32_t table, Key key, const float* row,
                                       uint32_t row_floats) {
  if (table >= tables_.size() || row_floats != tables_[table].row_floats) {
    return absl::InvalidArgumentError(absl::StrCat("row of table ", table, " with ", row_floats,
                                                   " floats does not fit the model"));
  }
  tables_[table].rows[key].assign(row, row + row_floats);
  return absl::OkStatus();
}

std::vector<float> ReferenceTrainer::Row(uint32_t table, Key key) const {
  auto it = tables_[table].rows.find(key);
  return it != tables_[table].rows.end() ? it->second : InitialRow(table, key);
}

void ReferenceTrainer::Stage(const data::KeyBatch& batch, bool create_rows, ModelInput* input) {
  input->rows = static_cast<int>(batch.num_samples);
  labels_.CopyFromHost(batch.labels);
  dense_.CopyFromHost(batch.dense);
  input->labels = labels_.data();
  input->dense = dense_.data();
  input->tables.clear();
  for (size_t t = 0; t < tables_.size(); ++t) {
    Table& table = tables_[t];
    absl::flat_hash_map<Key, uint32_t> slot_of;
    std::vector<Key>& keys = batch_keys_[t];
    keys.clear();
    std::vector<uint32_t> slots;
    for (Key key : batch.tables[t].keys) {
      auto [it, inserted] = slot_of.try_emplace(key, static_cast<uint32_t>(keys.size()));
      if (inserted) keys.push_back(key);
      slots.push_back(it->second);
    }
    std::vector<float> host(keys.size() * table.row_floats);
    for (size_t i = 0; i < keys.size(); ++i) {
      auto found = table.rows.find(keys[i]);
      if (found == table.rows.end() && create_rows) {
        found = table.rows.emplace(keys[i], InitialRow(static_cast<uint32_t>(t), keys[i])).first;
      }
      const std::vector<float> row =
          found != table.rows.end() ? found->second : InitialRow(static_cast<uint32_t>(t), keys[i]);
      std::copy(row.begin(), row.end(), host.begin() + i * table.row_floats);
    }
    rows_[t].CopyFromHost(host);
    grads_[t].Resize(keys.size() * table.dim);
    device_->Fill(grads_[t].data(), grads_[t].size(), 0.0f);
    table_slots_[t] = std::move(slots);
  }
  // One input per feature (the model's order) over its table's rows and
  // gradients; a table several features look up is split into theirs.
  std::vector<TableLists> lists(tables_.size());
  for (size_t t = 0; t < tables_.size(); ++t) {
    const data::KeyBatch::Table& keys = batch.tables[t];
    lists[t] = {&keys.offsets, &table_slots_[t], keys.features, &keys.feature_lengths,
                &keys.weights};
  }
  input->tables = feature_inputs_->Upload(lists);
  const std::vector<TableShape>& features = model_->shape().tables;
  for (size_t f = 0; f < features.size(); ++f) {
    const uint32_t t = features[f].table;
    input->tables[f].cache_rows = rows_[t].data();
    input->tables[f].row_stride = static_cast<int>(tables_[t].row_floats);
    input->tables[f].slot_grads = grads_[t].data();
  }
}

absl::StatusOr<double> ReferenceTrainer::Train(const data::KeyBatch& batch) {
  if (batch.tables.size() != tables_.size() || batch.num_samples == 0) {
    return absl::InvalidArgumentError("reference trainer: batch does not match the job");
  }
  ModelInput input;
  Stage(batch, /*create_rows=*/true, &input);
  // The whole global batch in order: row r is sample r (dropout masks).
  input.iteration = iterations_;
  const double loss = model_->TrainStep(input, 1.0f / static_cast<float>(batch.num_samples));
  const uint64_t iteration = iterations_++;
  dense_optimizer_.Step(model_->params(), iteration);
  for (size_t t = 0; t < tables_.size(); ++t) {
    Table& table = tables_[t];
    const std::vector<Key>& keys = batch_keys_[t];
    if (keys.empty()) continue;
    std::vector<uint32_t> all(keys.size());
    std::iota(all.begin(), all.end(), 0u);
    all_slots_.CopyFromHost(all);
    device_->ApplyRowUpdates(
        math::AtIteration(table.optimizer, iteration), static_cast<int>(table.dim),
        all_slots_.data(), static_cast<int>(all.size()), grads_[t].data(),
        static_cast<int>(table.dim), rows_[t].data(), static_cast<int>(table.row_floats));
    const std::vector<float> host = rows_[t].ToHost();
    for (size_t i = 0; i < keys.size(); ++i) {
      std::vector<float>& row = table.rows[keys[i]];
      row.assign(host.begin() + i * table.row_floats, host.begin() + (i + 1) * table.row_floats);
    }
  }
  // Row expiry: these rows are gone after this iteration; a key that
  // returns starts from its initial value.
  for (size_t t = 0; t < tables_.size(); ++t) {
    for (Key key : batch.tables[t].expired) tables_[t].rows.erase(key);
  }
  return loss;
}

std::vector<float> ReferenceTrainer::Predict(const data::KeyBatch& batch) {
  ModelInput input;
  Stage(batch, /*create_rows=*/false, &input);
  return model_->Predict(input);
}

}  // namespace herald::worker
