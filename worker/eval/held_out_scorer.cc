#include "worker/eval/held_out_scorer.h"

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
    : spec_(spec), job_id_(std::move(job_id)), ps_(ps), model_(model), device_(device) {
  tables_.resize(spec_.tables_size());
  for (TableArrays& t : tables_) {
    t.rows.Bind(device);
  }
  features_.resize(model_->shape().tables.size());
  for (FeatureArrays& f : features_) {
    f.offsets.Bind(device);
    f.slots.Bind(device);
    f.weights.Bind(device);
  }
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
  const std::vector<TableShape>& shape = model_->shape().tables;
  splits_.resize(tables_.size());
  for (size_t f = 0; f < shape.size(); ++f) {
    const uint32_t t = shape[f].table;
    FeatureArrays& arrays = features_[f];
    uint32_t entries = 0;
    if (features_of[t] > 1) {
      if (shape[f].index_in_table == 0) {  // the table's first feature: split once
        SplitFeatures(offsets[t], slots[t], features_of[t], lengths[t], weights[t], &splits_[t]);
      }
      const FeatureBags& bags = splits_[t][shape[f].index_in_table];
      arrays.offsets.CopyFromHost(bags.offsets);
      arrays.slots.CopyFromHost(bags.slots);
      arrays.weights.CopyFromHost(bags.weights);
      entries = static_cast<uint32_t>(bags.slots.size());
    } else {
      arrays.offsets.CopyFromHost(offsets[t]);
      arrays.slots.CopyFromHost(slots[t]);
      arrays.weights.CopyFromHost(weights[t]);
      entries = static_cast<uint32_t>(slots[t].size());
    }
    input.tables.push_back({arrays.offsets.data(), arrays.slots.data(), tables_[t].rows.data(),
                            static_cast<int>(rows[t].row_floats), nullptr, entries,
                            static_cast<uint32_t>(rows[t].keys.size())});
    if (!weights[t].empty()) input.tables.back().weights = arrays.weights.data();
  }
  return model_->Predict(input);
}

}  // namespace herald::worker
