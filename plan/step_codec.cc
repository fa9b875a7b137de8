#include "plan/step_codec.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "plan/plan_codec.h"
#include "plan/wire_columns.h"

namespace herald::plan {
namespace {

absl::Status SameCount(size_t a, size_t b, const std::string& field_a, const std::string& field_b) {
  if (a == b) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field_a, " has ", a, " entries but ", field_b, " has ", b));
}

absl::Status DecodeSamples(const proto::StepSamples& s, uint32_t num_tables, uint32_t num_dense,
                           Step* step) {
  const uint32_t n = s.num_samples();
  HERALD_RETURN_IF_ERROR(UnpackColumn(s.labels(), "samples.labels", &step->labels));
  step->num_labels = std::max<uint32_t>(s.labels_per_sample(), 1);
  HERALD_RETURN_IF_ERROR(SameCount(step->labels.size(), size_t{n} * step->num_labels,
                                   "samples.labels", "samples.num_samples × labels_per_sample"));
  // The data readers checked each label against its kind (a binary one in
  // [0, 1], a regression one finite); on the wire every label is finite.
  for (float label : step->labels) {
    if (!std::isfinite(label)) {
      return absl::InvalidArgumentError(
          absl::StrCat("samples.labels: ", label, " is not a finite number"));
    }
  }
  HERALD_RETURN_IF_ERROR(UnpackColumn(s.dense(), "samples.dense", &step->dense));
  if (step->dense.size() != static_cast<size_t>(n) * num_dense) {
    return absl::InvalidArgumentError(absl::StrCat(
        "samples.dense: ", step->dense.size(),
        " floats, want num_samples × num_dense = ", static_cast<size_t>(n) * num_dense));
  }
  for (float v : step->dense) {
    if (!std::isfinite(v)) return absl::InvalidArgumentError("samples.dense: non-finite value");
  }
  HERALD_RETURN_IF_ERROR(
      UnpackColumn(s.sample_indices(), "samples.sample_indices", &step->sample_indices));
  if (!step->sample_indices.empty()) {
    HERALD_RETURN_IF_ERROR(
        SameCount(step->sample_indices.size(), n, "samples.sample_indices", "samples.num_samples"));
    for (uint32_t index : step->sample_indices) {
      if (index >= step->global_batch_size) {
        return absl::InvalidArgumentError(absl::StrCat("samples.sample_indices: ", index,
                                                       " is not below global_batch_size ",
                                                       step->global_batch_size));
      }
    }
  }
  step->samples.resize(num_tables);
  std::vector<bool> seen(num_tables, false);
  for (int i = 0; i < s.tables_size(); ++i) {
    const auto& t = s.tables(i);
    const std::string field = absl::StrCat("samples.tables[", i, "]");
    if (t.table_id() >= num_tables || seen[t.table_id()]) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".table_id: ", t.table_id(),
                                                     " is unknown or repeated (job has ",
                                                     num_tables, " tables)"));
    }
    seen[t.table_id()] = true;
    TableSamples& out = step->samples[t.table_id()];
    HERALD_RETURN_IF_ERROR(UnpackColumn(t.slots(), field + ".slots", &out.slots));
    if (t.offsets().empty()) {
      // One slot per sample.
      if (out.slots.size() != n) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".offsets: none (one slot per sample), but ", out.slots.size(),
                         " slots for ", n, " samples"));
      }
      out.offsets.resize(n + 1);
      for (uint32_t j = 0; j <= n; ++j) out.offsets[j] = j;
    } else {
      HERALD_RETURN_IF_ERROR(UnpackColumn(t.offsets(), field + ".offsets", &out.offsets));
    }
    if (out.offsets.size() != n + 1 || out.offsets[0] != 0 || out.offsets[n] != out.slots.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".offsets: want num_samples + 1 = ", n + 1,
                       " offsets from 0 to the number of slots ", out.slots.size()));
    }
    for (uint32_t j = 0; j < n; ++j) {
      if (out.offsets[j] > out.offsets[j + 1]) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".offsets: decreasing at sample ", j));
      }
    }
    if (!t.weights().empty()) {
      HERALD_RETURN_IF_ERROR(UnpackColumn(t.weights(), field + ".weights", &out.weights));
      if (out.weights.size() != out.slots.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".weights: ", out.weights.size(), " weights for ", out.slots.size(), " slots"));
      }
    }
    if (!t.feature_lengths().empty()) {
      HERALD_RETURN_IF_ERROR(
          UnpackColumn(t.feature_lengths(), field + ".feature_lengths", &out.feature_lengths));
      const size_t k = n > 0 ? out.feature_lengths.size() / n : 0;
      if (n == 0 || k < 2 || k * n != out.feature_lengths.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".feature_lengths: ", out.feature_lengths.size(),
                         " lengths are not 2 or more features for each of ", n, " samples"));
      }
      out.features = static_cast<uint32_t>(k);
      for (uint32_t j = 0; j < n; ++j) {
        uint64_t sum = 0;
        for (size_t f = 0; f < k; ++f) sum += out.feature_lengths[j * k + f];
        if (sum != out.offsets[j + 1] - out.offsets[j]) {
          return absl::InvalidArgumentError(
              absl::StrCat(field, ".feature_lengths: sample ", j, "'s sum to ", sum, ", it has ",
                           out.offsets[j + 1] - out.offsets[j], " slots"));
        }
      }
    }
  }
  for (uint32_t t = 0; t < num_tables; ++t) {
    if (!seen[t]) {
      return absl::InvalidArgumentError(absl::StrCat("samples.tables: table ", t, " is missing"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Step> DecodeWorkerStep(const proto::WorkerStep& in, uint32_t num_tables,
                                      uint32_t num_dense) {
  Step step;
  step.job_id = in.job_id();
  step.iteration = in.iteration();
  step.global_batch_size = in.global_batch_size();
  step.num_samples = in.samples().num_samples();
  if (step.global_batch_size < step.num_samples || step.global_batch_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat("global_batch_size: ", step.global_batch_size,
                                                   " must be >= num_samples ", step.num_samples,
                                                   " and > 0"));
  }
  HERALD_RETURN_IF_ERROR(DecodeSamples(in.samples(), num_tables, num_dense, &step));
  HERALD_ASSIGN_OR_RETURN(step.plan, DecodeCachePlan(in.plan(), num_tables));
  return step;
}

void EncodeTableSamples(const std::vector<TableSamples>& tables, proto::StepSamples* out) {
  for (size_t t = 0; t < tables.size(); ++t) {
    proto::StepSamples::TableSlots* table = out->add_tables();
    table->set_table_id(static_cast<uint32_t>(t));
    // One slot per sample (a one-hot feature present in every sample): the
    // offsets go without saying.
    const std::vector<uint32_t>& offsets = tables[t].offsets;
    bool one_per_sample = offsets.size() == tables[t].slots.size() + 1;
    for (size_t i = 0; one_per_sample && i < offsets.size(); ++i) one_per_sample = offsets[i] == i;
    if (!one_per_sample) PackColumn(offsets, table->mutable_offsets());
    PackColumn(tables[t].slots, table->mutable_slots());
    if (tables[t].features > 1) {
      PackColumn(tables[t].feature_lengths, table->mutable_feature_lengths());
    }
    if (!tables[t].weights.empty()) PackColumn(tables[t].weights, table->mutable_weights());
  }
}

proto::WorkerStep EncodeWorkerStep(const Step& step) {
  proto::WorkerStep out;
  out.set_job_id(step.job_id);
  out.set_iteration(step.iteration);
  out.set_global_batch_size(step.global_batch_size);
  proto::StepSamples* s = out.mutable_samples();
  s->set_num_samples(step.num_samples);
  if (step.num_labels != 1) s->set_labels_per_sample(step.num_labels);
  PackColumn(step.labels, s->mutable_labels());
  PackColumn(step.dense, s->mutable_dense());
  if (!step.sample_indices.empty()) PackColumn(step.sample_indices, s->mutable_sample_indices());
  EncodeTableSamples(step.samples, s);
  EncodeCachePlan(step.plan, out.mutable_plan());
  return out;
}

}  // namespace herald::plan
