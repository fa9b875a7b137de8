#include "worker/eval/held_out_scorer.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace herald::worker {
namespace {

// The elements of a little-endian byte field, checked to be `expected` long.
template <typename T>
absl::StatusOr<std::vector<T>> Elements(const std::string& bytes, size_t expected,
                                        const std::string& field) {
  if (bytes.size() != expected * sizeof(T)) {
    return absl::InvalidArgumentError(absl::StrCat("eval batch: ", field, " has ", bytes.size(),
                                                   " bytes, expected ", expected * sizeof(T)));
  }
  std::vector<T> out(expected);
  if (expected > 0) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace

HeldOutScorer::HeldOutScorer(const proto::JobSpec& spec, std::string job_id, ps::PsClient* ps,
                             RecModel* model, Device* device)
    : spec_(spec), job_id_(std::move(job_id)), ps_(ps), model_(model) {
  tables_.resize(spec_.tables_size());
  for (TableArrays& t : tables_) {
    t.rows.Bind(device);
  }
  feature_inputs_ = std::make_unique<FeatureInputs>(device, model_->shape());
  dense_.Bind(device);
}

absl::StatusOr<std::vector<float>> HeldOutScorer::Score(const proto::EvalBatch& batch,
                                                        uint64_t iteration) {
  const uint32_t n = batch.num_samples();
  if (n == 0) return absl::InvalidArgumentError("eval batch: no samples");
  if (batch.tables_size() != spec_.tables_size()) {
    return absl::InvalidArgumentError(absl::StrCat("eval batch: ", batch.tables_size(),
                                                   " tables, the job has ", spec_.tables_size()));
  }
  HERALD_ASSIGN_OR_RETURN(std::vector<float> dense,
                          Elements<float>(batch.dense(), size_t{n} * spec_.num_dense(), "dense"));
  // Per table: the batch's distinct keys in first-use order and each use's
  // slot among them (ReferenceTrainer::Stage's layout).
  std::vector<ps::TableKeys> request;
  std::vector<std::vector<uint32_t>> offsets(tables_.size()), slots(tables_.size());
  std::vector<std::vector<uint32_t>> lengths(tables_.size());
  std::vector<std::vector<float>> weights(tables_.size());
  std::vector<uint32_t> features_of(tables_.size(), 0);
  for (const TableShape& f : model_->shape().tables) ++features_of[f.table];
  for (size_t t = 0; t < tables_.size(); ++t) {
    const proto::EvalBatch::Table& table = batch.tables(static_cast<int>(t));
    const std::string where = absl::StrCat("tables[", t, "]");
    HERALD_ASSIGN_OR_RETURN(offsets[t],
                            Elements<uint32_t>(table.offsets(), n + 1, where + ".offsets"));
    if (table.keys().size() % sizeof(Key) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "eval batch: ", where, ".keys has ", table.keys().size(), " bytes, not whole keys"));
    }
    HERALD_ASSIGN_OR_RETURN(
        std::vector<Key> keys,
        Elements<Key>(table.keys(), table.keys().size() / sizeof(Key), where + ".keys"));
    for (uint32_t s = 0; s < n; ++s) {
      if (offsets[t][s] > offsets[t][s + 1]) {
        return absl::InvalidArgumentError(
            absl::StrCat("eval batch: ", where, ".offsets decrease at sample ", s));
      }
    }
    if (offsets[t][0] != 0 || offsets[t][n] != keys.size()) {
      return absl::InvalidArgumentError(absl::StrCat("eval batch: ", where, ".offsets span [",
                                                     offsets[t][0], ", ", offsets[t][n], "), ",
                                                     "the table has ", keys.size(), " keys"));
    }
    if (!table.weights().empty()) {
      HERALD_ASSIGN_OR_RETURN(weights[t],
                              Elements<float>(table.weights(), keys.size(), where + ".weights"));
    }
    if (features_of[t] > 1) {  // each sample's keys split among the table's features
      const uint32_t k = features_of[t];
      HERALD_ASSIGN_OR_RETURN(lengths[t], Elements<uint32_t>(table.feature_lengths(), size_t{n} * k,
                                                             where + ".feature_lengths"));
      for (uint32_t s = 0; s < n; ++s) {
        uint64_t sum = 0;
        for (uint32_t j = 0; j < k; ++j) sum += lengths[t][size_t{s} * k + j];
        if (sum != offsets[t][s + 1] - offsets[t][s]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "eval batch: ", where, ".feature_lengths of sample ", s, " do not sum to its keys"));
        }
      }
    }
    absl::flat_hash_map<Key, uint32_t> slot_of;
    ps::TableKeys distinct{TableId(static_cast<uint32_t>(t)), {}};
    for (Key key : keys) {
      auto [it, inserted] = slot_of.try_emplace(key, static_cast<uint32_t>(distinct.keys.size()));
      if (inserted) distinct.keys.push_back(key);
      slots[t].push_back(it->second);
    }
    request.push_back(std::move(distinct));
  }
  HERALD_ASSIGN_OR_RETURN(
      std::vector<ps::TableRows> rows,
      ps_->Fetch(job_id_, Iteration(iteration), request, ps::FetchMode::kReadOnly));
  if (rows.size() != request.size()) {
    return absl::InternalError("PS client answered a different number of tables");
  }
  ModelInput input;
  input.rows = static_cast<int>(n);
  dense_.CopyFromHost(dense);
  input.dense = dense_.data();
  for (size_t t = 0; t < tables_.size(); ++t) tables_[t].rows.CopyFromHost(rows[t].rows);
  // One input per feature (the model's order), over its table's rows.
  std::vector<TableLists> lists(tables_.size());
  for (size_t t = 0; t < tables_.size(); ++t) {
    lists[t] = {&offsets[t], &slots[t], std::max<uint32_t>(1, features_of[t]), &lengths[t],
                &weights[t]};
  }
  input.tables = feature_inputs_->Upload(lists);
  const std::vector<TableShape>& shape = model_->shape().tables;
  for (size_t f = 0; f < shape.size(); ++f) {
    const uint32_t t = shape[f].table;
    input.tables[f].cache_rows = tables_[t].rows.data();
    input.tables[f].row_stride = static_cast<int>(rows[t].row_floats);
    input.tables[f].capacity = static_cast<uint32_t>(rows[t].keys.size());
  }
  return model_->Predict(input);
}

}  // namespace herald::worker
